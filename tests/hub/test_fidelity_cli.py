"""``verihub fidelity`` end to end on GSM8K: labels generated from the shared data, the real grader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hub.review.testing import shared_data_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = 100


def verihub(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VERIHUB_CONFIG": "/nonexistent/verihub.toml"}
    return subprocess.run(
        [sys.executable, "-m", "hub", *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


@pytest.fixture(scope="module")
def data() -> Path:
    try:
        return shared_data_dir(ROOT)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def make_labels(data: Path, out: Path) -> list[dict[str, Any]]:
    script = ROOT / "scripts" / "make_label_files.py"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--data",
            str(data),
            "--out",
            str(out),
            "--only",
            "gsm8k",
            "--limit",
            str(SAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    path = out / "gsm8k.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def fidelity(data: Path, labels: Path) -> dict[str, Any]:
    done = verihub(
        "fidelity",
        "gsm8k",
        "--labels",
        str(labels),
        "--json",
        "--env-arg",
        f"path={data / 'gsm8k' / 'test.jsonl'}",
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_gsm8k_card_adds_up_and_follows_the_labels(data: Path, tmp_path: Path) -> None:
    rows = make_labels(data, tmp_path)
    assert len(rows) == SAMPLE
    # two responses the grader must disagree with: a wrong answer labelled right, a right one labelled wrong
    wrong = {**rows[0], "response": "The answer is A: 123456789", "label": True}
    right_refused = next(r for r in rows if r["label"])
    rows += [wrong, {**right_refused, "label": False}]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    card = fidelity(data, labels)

    positives = sum(r["label"] for r in rows)
    assert card["n"] == len(rows) and card["errors"] == 0
    assert card["true_positive"] + card["false_negative"] == positives
    assert card["false_positive"] + card["true_negative"] == len(rows) - positives
    assert card["false_negative"] >= 1 and card["false_positive"] >= 1
    assert card["accuracy"]["k"] == card["true_positive"] + card["true_negative"]
    fpr, fnr = card["false_positive_rate"], card["false_negative_rate"]
    assert (fpr["k"], fpr["n"]) == (card["false_positive"], len(rows) - positives)
    assert (fnr["k"], fnr["n"]) == (card["false_negative"], positives)
    assert fpr["ci95"][0] <= fpr["value"] <= fpr["ci95"][1]
    lines = {(e["kind"], e["line"]) for e in card["examples"]}
    assert ("false_negative", SAMPLE + 1) in lines and ("false_positive", SAMPLE + 2) in lines

    # the same responses with every label flipped: each agreement becomes a disagreement
    flipped = tmp_path / "flipped.jsonl"
    flipped.write_text(
        "".join(json.dumps({**r, "label": not r["label"]}) + "\n" for r in rows), encoding="utf-8"
    )
    other = fidelity(data, flipped)
    assert (
        other["false_positive"] == card["true_positive"] and other["false_negative"] == card["true_negative"]
    )
    assert (
        other["true_positive"] == card["false_positive"] and other["true_negative"] == card["false_negative"]
    )


@pytest.mark.slow
def test_bad_label_files_give_one_line_errors(tmp_path: Path) -> None:
    missing = verihub("fidelity", "gsm8k", "--labels", str(tmp_path / "nope.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x", "response": "1", "label": true}\n[1, 2]\n', encoding="utf-8")
    malformed = verihub("fidelity", "gsm8k", "--labels", str(bad))
    for done, needle in ((missing, "not found"), (malformed, "malformed line(s) (2)")):
        lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], done.stderr


FLOORS = {
    # env id, its data: (most false positives, most false negatives) on the whole label set
    "gsm8k": ("gsm8k/test.jsonl", 0, 0),
    "ifeval": ("ifeval", 0, 0),
    "nq_open": ("nq_open", 10, 264),
}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(FLOORS))
def test_bundled_verifier_cards_hold(env_id: str, data: Path, tmp_path: Path) -> None:
    """The published cards (docs/graders.md) stay at today's figures or better."""
    from hub.env.aio import run
    from hub.registry import load_environment
    from hub.review.fidelity import measure, read_labels

    script = ROOT / "scripts" / "make_label_files.py"
    args = [sys.executable, str(script), "--data", str(data), "--out", str(tmp_path), "--only", env_id]
    assert subprocess.run(args, capture_output=True, timeout=120, cwd=ROOT).returncode == 0
    where, most_fp, most_fn = FLOORS[env_id]
    env = load_environment(env_id, path=str(data / where))
    card = run(measure(env, read_labels(tmp_path / f"{env_id}.jsonl")))
    assert card.errors == 0 and card.grader_failed == 0
    assert card.false_positive <= most_fp and card.false_negative <= most_fn, card.to_text()
