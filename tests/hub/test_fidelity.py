"""Fidelity of a grader against labelled responses: rates, intervals and bad label files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from graders.grade import Grade
from hub.env.aio import run
from hub.env.environment import SingleTurnEnv
from hub.env.errors import UsageError
from hub.env.types import Task
from hub.review.fidelity import FidelityReport, measure, rate, read_labels


async def stub_grader(response: str, *, reference: Any) -> Grade:
    """Passes a response equal to the reference; ``boom`` raises (a grader bug), ``down`` is an
    infrastructure error."""
    if response == "boom":
        raise RuntimeError("grader bug")
    if response == "down":
        return Grade.error("judge unreachable")
    return Grade.correct() if response == reference else Grade.incorrect(reason="different")


def stub_env() -> SingleTurnEnv:
    tasks = [Task(id=f"t{i}", prompt=f"question {i}", answer=str(i)) for i in range(4)]
    return SingleTurnEnv(id="stub", version="1.0", tasks=tasks, grader=stub_grader)


def write(path: Path, rows: list[Mapping[str, Any] | str]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def card(path: Path, examples: int = 5) -> FidelityReport:
    return run(measure(stub_env(), read_labels(path), source=str(path), examples=examples))


def test_confusion_matrix_and_rates(tmp_path: Path) -> None:
    rows: list[Mapping[str, Any] | str] = [
        {"task_id": "t0", "response": "0", "label": True},  # TP
        {"task_id": "t1", "response": "1", "label": True},  # TP
        {"task_id": "t2", "response": "2", "label": True},  # TP
        {"task_id": "t3", "response": "4", "label": True},  # FN (refused)
        {"task_id": "t0", "response": "boom", "label": True},  # FN, grader_failed
        {"task_id": "t1", "response": "1", "label": False},  # FP (rewarded)
        {"task_id": "t2", "response": "7", "label": False},  # TN
        "",
        {"task_id": "t3", "response": "8", "label": False},  # TN
        {"task_id": "t3", "response": "down", "label": False},  # error: no verdict
    ]
    report = card(write(tmp_path / "labels.jsonl", rows))
    assert (report.true_positive, report.false_negative, report.false_positive, report.true_negative) == (
        3,
        2,
        1,
        2,
    )
    assert report.n == 8 and report.errors == 1 and report.grader_failed == 1
    assert (report.accuracy.k, report.accuracy.n) == (5, 8)
    assert (report.false_positive_rate.k, report.false_positive_rate.n) == (1, 3)
    assert (report.false_negative_rate.k, report.false_negative_rate.n) == (2, 5)
    assert report.false_negative_rate.value == pytest.approx(0.4)
    low, high = report.false_positive_rate.ci95
    assert low < 1 / 3 < high
    kinds = sorted((e.kind, e.line) for e in report.examples)
    assert kinds == [("false_negative", 4), ("false_negative", 5), ("false_positive", 6)]
    assert "grader_failed" in next(e.reason for e in report.examples if e.line == 5)
    text = report.to_text()
    assert "(1/3)" in text and "(2/5)" in text and "grader_failed 1" in text


def test_wilson_intervals_known_values() -> None:
    zero = rate(0, 10)
    assert zero.value == 0.0
    assert zero.ci95[0] == 0.0 and zero.ci95[1] == pytest.approx(0.2775, abs=1e-4)
    half = rate(5, 10)
    assert half.ci95 == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert rate(0, 0).value is None and rate(0, 0).ci95 == (0.0, 1.0)


def test_examples_capped_and_reference_override(tmp_path: Path) -> None:
    rows: list[Mapping[str, Any] | str] = [
        {"task_id": "t0", "response": "x", "label": True} for _ in range(4)
    ]
    rows.append({"task_id": "t0", "response": "x", "reference": "x", "label": True})  # reference replaces 0
    rows.append({"prompt": "free question", "response": "y", "reference": "y", "label": True})  # own task
    rows.append({"prompt": "question 2", "response": "2", "label": True})  # a task found by its prompt
    report = card(write(tmp_path / "labels.jsonl", rows), examples=2)
    assert (report.true_positive, report.false_negative) == (3, 4)
    assert [e.line for e in report.examples] == [1, 2]


def test_malformed_lines_are_refused_with_their_numbers(tmp_path: Path) -> None:
    rows: list[Mapping[str, Any] | str] = [
        {"task_id": "t0", "response": "0", "label": True},
        "{not json",
        {"task_id": "t0", "response": "0", "label": "yes"},
        {"response": "0", "label": True},
    ]
    with pytest.raises(UsageError) as info:
        read_labels(write(tmp_path / "labels.jsonl", rows))
    message = str(info.value)
    assert "3 malformed line(s) (2, 3, 4)" in message and "line 2: not JSON" in message


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        read_labels(tmp_path / "nope.jsonl")
    with pytest.raises(UsageError, match="no labelled responses"):
        read_labels(write(tmp_path / "empty.jsonl", [""]))


def test_unknown_task_ids_are_refused(tmp_path: Path) -> None:
    rows: list[Mapping[str, Any] | str] = [
        {"task_id": "t0", "response": "0", "label": True},
        {"task_id": "gsm8k-test-0001", "response": "0", "label": True},
        {"prompt": "not a task here", "response": "0", "label": True},
    ]
    with pytest.raises(UsageError) as info:
        card(write(tmp_path / "labels.jsonl", rows))
    message = str(info.value)
    assert "2 label line(s) match no task of stub (2, 3" in message
    assert "'gsm8k-test-0001'" in message


def test_a_generated_environment_is_matched_by_prompt_and_reference(tmp_path: Path) -> None:
    """A generated environment lists no tasks by id: a line with an id it cannot list, its prompt
    and its reference (what a hub's label file gives) is graded against a task made of those."""
    env = SingleTurnEnv(id="gen", version="1.0", tasks=[], grader=stub_grader)
    assert env.num_tasks("test") in (0, None)
    rows: list[Mapping[str, Any] | str] = [
        {"task_id": "test-0-0", "prompt": "2 + 2", "response": "4", "reference": "4", "label": True},
        {"task_id": "test-0-1", "prompt": "3 + 3", "response": "7", "reference": "6", "label": True},
    ]
    path = write(tmp_path / "labels.jsonl", rows)
    report = run(measure(env, read_labels(path), source=str(path)))
    assert (report.true_positive, report.false_negative) == (1, 1)
    with pytest.raises(UsageError, match="1 label line"):  # no reference: nothing to grade against
        card(
            write(
                tmp_path / "bare.jsonl",
                [{"task_id": "x-1", "prompt": "2 + 2", "response": "4", "label": True}],
            )
        )


def test_lines_name_tasks_of_a_split_without_end_by_id(tmp_path: Path) -> None:
    from itertools import count

    from hub.review.fidelity import GENERATED_TASKS

    def endless(split: str, seed: int) -> Any:
        return (Task(id=f"{split}-{seed}-{i}", prompt=f"q{i}", answer=str(i)) for i in count())

    env = SingleTurnEnv(id="endless", version="1.0", tasks=endless, grader=stub_grader)
    assert env.num_tasks("test") is None
    near = write(tmp_path / "near.jsonl", [{"task_id": "test-0-7", "response": "7", "label": True}])
    report = run(measure(env, read_labels(near)))
    assert (report.n, report.true_positive) == (1, 1)
    far = f"test-0-{GENERATED_TASKS}"  # past the indexed prefix: no such task
    beyond = write(tmp_path / "far.jsonl", [{"task_id": far, "response": "1", "label": True}])
    with pytest.raises(UsageError, match="match no task of endless"):
        run(measure(env, read_labels(beyond)))
