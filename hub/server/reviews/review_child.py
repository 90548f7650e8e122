"""One review, run in its own process by a worker: ``python -m hub.server.reviews.review_child ARCHIVE OUT``.

The uploaded bundle is unpacked again (same caps as on push) and
:func:`hub.review.verify.verify_submission` re-verifies it in full: hashes, the recorded
evaluation, the sandboxed regrade of the recorded rollouts, and ``verihub check`` on the sdist
(which runs the environment's code in the check sandbox). The JSON report is written to OUT.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hub.review.check import CheckOptions
from hub.review.verify import verify_submission
from hub.server.core.archive import unpack_upload
from hub.server.core.config import Limits

__all__ = ["FAST_CHECK", "run_review"]

#: Smaller check sizes for ``--review-fast`` (tests, benchmarks); the real check otherwise.
FAST_CHECK = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)


def run_review(archive: Path, *, fast: bool = False) -> dict[str, Any]:
    """Review the bundle archive; ``passed`` is True when it verifies and its check passes."""
    with tempfile.TemporaryDirectory(prefix="verihub-review-") as tmp:
        root = unpack_upload(archive, Path(tmp) / "bundle", Limits())
        found = verify_submission(root, check_options=FAST_CHECK if fast else None)
    report = found.report
    return {
        "passed": found.ok,
        "problems": found.problems,
        "manifest_sha256": found.manifest_sha256,
        "check": report.model_dump(mode="json") if report is not None else None,
        "check_text": report.to_text() if report is not None else "",
        "fast": fast,
    }


def main(argv: list[str]) -> int:
    archive, out = Path(argv[0]), Path(argv[1])
    try:
        result = run_review(archive, fast="--fast" in argv[2:])
    except Exception as exc:  # the report says what broke; the worker records it as failed
        result = {"passed": False, "problems": [f"the review crashed: {type(exc).__name__}: {exc}"]}
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
