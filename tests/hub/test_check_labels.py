"""The check's verifier card: a package's ``labels.jsonl`` graded by its own grader.

The unit tests drive :func:`measure_packaged_labels` on a staged folder with the environment
loaded here; the sandbox tests run the real check on packages that ship a label file."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from graders.exact import ExactGrader
from hub.env.aio import run
from hub.env.environment import SingleTurnEnv
from hub.env.types import Task
from hub.review.check import CheckOptions, check
from hub.review.check.labels import MAX_LABEL_BYTES, MAX_LABEL_LINES, measure_packaged_labels
from hub.review.check.report import CheckReport

REPO = Path(__file__).resolve().parents[2]
ARITH = REPO / "environments" / "arith"
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)
PROMPT = "Compute 2 + 3. Reply with the final answer as: Answer: <integer>"


def _line(response: str, label: bool, **extra: object) -> str:
    return json.dumps({"prompt": PROMPT, "reference": "5", "response": response, "label": label, **extra})


def _stage(tmp_path: Path, labels: str | bytes | None) -> Path:
    stage = tmp_path / "stage"
    info = stage / "verihub_arith-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text(
        "[verihub.environments]\narith = verihub_arith:load_environment\n", encoding="utf-8"
    )
    (stage / "verihub_arith").mkdir()
    if labels is not None:
        data = labels.encode("utf-8") if isinstance(labels, str) else labels
        (stage / "verihub_arith" / "labels.jsonl").write_bytes(data)
    return stage


def _measure(stage: Path) -> CheckReport:
    report = CheckReport(target="t")
    env = SingleTurnEnv(
        id="toy", tasks=[Task(id="t0", prompt=PROMPT, answer="5")], grader=ExactGrader(kind="integer")
    )
    run(measure_packaged_labels(env, stage, report, timeout_s=5.0))
    return report


def _note(report: CheckReport) -> tuple[str, str]:
    result = report.result("verifier_card")
    assert result is not None
    return result.status, result.reason


def test_a_label_file_gives_a_card_with_its_hash(tmp_path: Path) -> None:
    text = "\n".join([_line("Answer: 5", True), _line("Answer: 6", False), _line("Answer: 5 or 6", True), ""])
    report = _measure(_stage(tmp_path, text))
    card = report.verifier_card
    assert card is not None and card.labels_sha256 == hashlib.sha256(text.encode()).hexdigest()
    # the hedge labelled right is refused: a false negative, measured as such
    assert (card.n, card.true_positive, card.false_negative, card.true_negative) == (3, 1, 1, 1)
    assert _note(report)[0] == "pass" and card.labels == "verihub_arith/labels.jsonl"
    (shown,) = card.examples  # the disagreement, for the author to read in the check's text
    assert shown.kind == "false_negative" and shown.response == "Answer: 5 or 6"
    assert "false_negative line 3" in report.to_text()


def test_no_label_file_is_not_measured(tmp_path: Path) -> None:
    report = _measure(_stage(tmp_path, None))
    status, reason = _note(report)
    assert status == "skip" and "not measured" in reason and report.verifier_card is None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json\n" + _line("Answer: 5", True), "malformed line(s) (1)"),
        (_line("Answer: 5", "yes"), "label must be true or false"),  # type: ignore[arg-type]
        ("\n\n", "holds no labelled responses"),
        (b"\xff\xfe" + b"x" * 10, "not UTF-8"),
        ("x" * (MAX_LABEL_BYTES + 1), "-byte limit"),
        ("\n".join(_line("Answer: 5", True) for _ in range(MAX_LABEL_LINES + 1)), "labelled lines, over"),
        (json.dumps({"task_id": "nope", "response": "5", "label": True}), "match no task of toy"),
    ],
    ids=["not-json", "bad-label", "empty", "not-utf8", "too-large", "too-many-lines", "no-such-task"],
)
def test_a_bad_label_file_is_a_warning_that_says_why(tmp_path: Path, content: str | bytes, why: str) -> None:
    report = _measure(_stage(tmp_path, content))
    status, reason = _note(report)
    assert status == "warn" and why in reason and report.verifier_card is None
    assert "verihub_arith/labels.jsonl" in reason


def test_a_label_file_that_grades_past_its_budget_is_a_warning(tmp_path: Path) -> None:
    import asyncio

    from graders.grade import Grade

    async def slow(response: str, *, reference: object) -> Grade:
        await asyncio.sleep(0.2)
        return Grade.correct()

    env = SingleTurnEnv(id="toy", tasks=[Task(id="t0", prompt=PROMPT, answer="5")], grader=slow)
    lines = "\n".join(_line("Answer: 5", True) for _ in range(20))
    report = CheckReport(target="t")
    graded = run(measure_packaged_labels(env, _stage(tmp_path, lines), report, timeout_s=5.0, budget_s=0.5))
    assert graded is True  # lines went to the grader: the check then makes sure it still answers
    status, reason = _note(report)
    assert status == "warn" and "grading its 20 lines took longer than 0.5s" in reason
    assert report.verifier_card is None


def test_a_symlinked_label_file_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(_line("Answer: 5", True), encoding="utf-8")
    stage = _stage(tmp_path, None)
    (stage / "verihub_arith" / "labels.jsonl").symlink_to(outside)
    status, reason = _note(_measure(stage))
    assert status == "warn" and "not a regular file" in reason


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_check_measures_the_shipped_label_file_in_the_sandbox() -> None:
    report = check(str(ARITH), options=FAST)
    assert report.passed, report.to_text()
    card = report.verifier_card
    shipped = (ARITH / "verihub_arith" / "labels.jsonl").read_bytes()
    assert card is not None and card.labels_sha256 == hashlib.sha256(shipped).hexdigest()
    assert card.n == len(shipped.splitlines()) and card.errors == 0
    assert card.false_positive == 0 and card.false_negative == 0
    assert "verifier card:" in report.to_text()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_malformed_shipped_label_file_is_a_note_not_a_failure(tmp_path: Path) -> None:
    src = tmp_path / "arith"
    shutil.copytree(ARITH, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    (src / "verihub_arith" / "labels.jsonl").write_text('{"prompt": 1}\n', encoding="utf-8")
    report = check(str(src), options=FAST)
    assert report.passed, report.to_text()
    result = report.result("verifier_card")
    assert result is not None and result.status == "warn" and "malformed" in result.reason
    assert report.verifier_card is None
