"""Reviewed data leaves the hub: the training endpoint (labelled rollouts and corrections with
provenance, privacy kept), and ``verihub labels pull`` and ``verihub export --sft --hub`` against
the application served over real HTTP on loopback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labels_kit import FakeGrader, post, post_label, seed_with_reviewer, toy_env, transcript  # noqa: E402
from serving import serve_http  # noqa: E402

from hub.env.aio import run as run_sync
from hub.review.fidelity import measure, read_labels
from hub.server.core.models import EnvFile, Run

TRAINING = "/api/v1/envs/alice/toy/1.0.0/training"


@pytest.fixture
def reviewed(hub: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    """Labels on alice's and bob's public runs and on bob's private one, and two corrections."""
    hub, ids = seed_with_reviewer(hub, tmp_path / "seed")
    storage = hub.client.app.state.storage
    with hub.sessions()() as s, s.begin():
        run = s.query(Run).filter_by(public_id=ids["strong"]).one()
        sha = storage.put_bytes(b"wheel bytes")
        s.add(
            EnvFile(
                version_id=run.version_id,
                kind="wheel",
                filename="toy-1.0.0-py3-none-any.whl",
                sha256=sha,
                size=11,
            )
        )
    hub.client.app.state.grade_correction = FakeGrader()
    assert post_label(hub, "rita", ids["strong"], 0, "correct", "fine").status_code == 201
    assert post_label(hub, "rita", ids["strong"], 1, "reward_hack").status_code == 201
    assert post_label(hub, "alice", ids["weak"], 2, "incorrect").status_code == 201
    assert post_label(hub, "root", ids["hidden"], 0, "correct").status_code == 201  # bob's private run
    for who, index, text in (("rita", 1, "Let me compute: 42. Answer: 42"), ("alice", 2, "Answer: 7")):
        messages = transcript(hub, ids["strong"], index)
        messages[-1]["content"] = text
        assert post(hub, who, ids["strong"], index, {"messages": messages}).status_code == 201
    return hub, ids


def test_training_records_carry_provenance_and_keep_private_runs_private(
    reviewed: tuple[Any, dict[str, str]],
) -> None:
    hub, ids = reviewed
    records = hub.client.get(TRAINING).json()  # anonymous: public runs only
    labelled = [r for r in records if not r["corrected"]]
    fixes = [r for r in records if r["corrected"]]
    assert {(r["provenance"]["run"], r["provenance"]["rollout"], r["label"]) for r in labelled} == {
        (ids["strong"], 0, "correct"),
        (ids["strong"], 1, "reward_hack"),
        (ids["weak"], 2, "incorrect"),
    }
    for r in records:
        p = r["provenance"]
        assert (p["source"], p["environment"], p["env_version"]) == ("hub", "alice/toy", "1.0.0")
        assert p["env_hash"].startswith("sha256:") or len(p["env_hash"]) > 8
        assert r["messages"][0]["role"] == "user" and 0.0 <= r["task_pass_rate"] <= 1.0
    assert {r["provenance"]["label_author"] for r in labelled} == {"rita", "alice"}
    assert [(r["provenance"]["correction_author"], r["passed"], r["label"]) for r in fixes] == [
        ("rita", True, None),
        ("alice", False, None),
    ]
    assert [r["provenance"]["parent_label"] for r in fixes] == ["reward_hack", None]
    assert fixes[0]["messages"][-1]["content"] == "Let me compute: 42. Answer: 42"
    as_bob = hub.client.get(TRAINING, headers=hub.auth("bob_read")).json()
    assert ids["hidden"] in {r["provenance"]["run"] for r in as_bob}  # his own private run
    assert hub.client.get("/api/v1/envs/bob/secret/1.0.0/training").status_code == 404


def cli(*argv: str) -> None:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(argv))
    assert done.value.code == 0


def test_labels_pull_and_export_against_a_live_hub(
    reviewed: tuple[Any, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, ids = reviewed
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "no-config.toml"))
    token = hub.tokens["rita_read"]
    labels, sft, hacks = tmp_path / "labels.jsonl", tmp_path / "fixed.jsonl", tmp_path / "hacks.jsonl"
    with serve_http(hub.client.app) as url:
        cli("labels", "pull", "alice/toy@1.0.0", "--hub", url, "--token", token, "-o", str(labels))
        cli("export", "--sft", "--hub", "alice/toy@1.0.0", "--hub-url", url, "--token", token,
            "--corrected", "--min-reward", "1", "-o", str(sft))  # fmt: skip
        cli("export", "--sft", "--hub", "alice/toy@1.0.0", "--hub-url", url, "--label", "reward_hack",
            "-o", str(hacks))  # fmt: skip
    monkeypatch.chdir(tmp_path)
    with serve_http(hub.client.app) as url:  # no -o: the file is named after the version
        cli("labels", "pull", "alice/toy", "--hub", url, "--token", token)
    assert (tmp_path / "toy-1.1.0.labels.jsonl").read_text(encoding="utf-8") == ""  # nothing on 1.1.0
    with pytest.raises(SystemExit) as refused:
        from hub.cli.entry import main

        main(["export", "--sft", "-o", str(tmp_path / "none.jsonl")])
    assert refused.value.code == 1
    records = read_labels(labels)
    assert sorted(r.label for r in records) == [False, False, True]  # the private run's label is not here
    report = run_sync(measure(toy_env(), records, source=str(labels)))
    # every seeded response is 'Answer: 42', which the grader rewards: the hack and the incorrect
    # one are false positives
    assert (report.true_positive, report.false_positive) == (1, 2)
    (fixed,) = [json.loads(x) for x in sft.read_text(encoding="utf-8").splitlines()]
    assert fixed["corrected"] and fixed["provenance"]["correction_author"] == "rita"
    assert fixed["provenance"]["run"] == ids["strong"] and fixed["provenance"]["rollout"] == 1
    (hack,) = [json.loads(x) for x in hacks.read_text(encoding="utf-8").splitlines()]
    assert hack["label"] == "reward_hack" and hack["provenance"]["label_author"] == "rita"
