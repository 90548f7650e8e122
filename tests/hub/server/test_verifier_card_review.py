"""A pushed version's verifier card comes from the hub's sandboxed review of its label file,
never from what its bundle records about itself."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.review.submit import MANIFEST, Manifest, bundle_files

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.model]

REPO = Path(__file__).resolve().parents[3]
LABELS = REPO / "environments" / "arith" / "verihub_arith" / "labels.jsonl"


def _claim_a_card(bundle: Path, out: Path) -> Path:
    """The bundle with a perfect card written into its recorded check report (manifest re-hashed,
    so the bundle still verifies)."""
    shutil.copytree(bundle, out)
    path = out / "check" / "report.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    fake = {"k": 10**6, "n": 10**6, "value": 1.0, "ci95": [1.0, 1.0]}
    recorded["verifier_card"] = {
        "n": 10**6,
        "accuracy": fake,
        "false_positive_rate": {**fake, "k": 0, "value": 0.0, "ci95": [0.0, 0.0]},
        "false_negative_rate": {**fake, "k": 0, "value": 0.0, "ci95": [0.0, 0.0]},
        "labels_sha256": "f" * 64,
        "grader_failed": 0,
        "errors": 0,
    }
    path.write_text(json.dumps(recorded), encoding="utf-8")
    manifest = Manifest.model_validate_json((out / MANIFEST).read_bytes())
    manifest = manifest.model_copy(update={"files": bundle_files(out)})
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return out


def test_the_review_measures_the_pushed_label_file(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], tmp_path: Path
) -> None:
    archive = packed(_claim_a_card(arith_bundle.bundle, tmp_path / "claims"))
    assert hub.push(archive).status_code == 201
    for _ in range(3):  # a review that ran out of time on a loaded host is queued again
        assert hub.review() == 1
        detail = hub.client.get("/api/v1/envs/alice/arith/0.1.0").json()
        if detail["state"] != "queued":
            break
    assert detail["state"] == "passed", detail["report"]
    card = detail["verifier_card"]
    shipped = LABELS.read_bytes()
    assert card is not None and card["measured_by"] == "hub review"
    assert card["labels_sha256"] == hashlib.sha256(shipped).hexdigest() != "f" * 64
    assert card["n"] == len(shipped.splitlines()) and card["n"] != 10**6
    assert card["false_positive_rate"]["k"] == 0 and card["false_negative_rate"]["k"] == 0
    page = hub.client.get("/alice/arith").text
    assert card["labels_sha256"] in page and "f" * 64 not in page
    assert card["labels_sha256"] in hub.client.get("/alice/arith/v/0.1.0").text
