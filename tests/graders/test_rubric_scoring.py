"""Rubric scoring: deterministic kinds, weights (120/183), required checks, thresholds, errors."""

from __future__ import annotations

from typing import Any

import pytest

from graders.grade import Grade
from graders.rubric import Rubric, load_rubric, register_grader, rubric_points


def rubric(*checks: dict[str, Any], **over: Any) -> Rubric:
    return load_rubric({"id": "t", "checks": list(checks), **over})


# -- functions named by `kind: function` checks (this module is importable by path) --------------
def starts_with_ref(response: str, *, reference: Any) -> bool:
    return response.startswith(str(reference))


def half(response: str, *, reference: Any, value: float = 0.5) -> float:
    return value


async def async_grade(response: str, *, reference: Any) -> Grade:
    return Grade.from_score(0.25)


def broken(response: str, *, reference: Any) -> bool:
    raise KeyError("oops")


def returns_junk(response: str, *, reference: Any) -> str:
    return "PASS"


def failing_grade(response: str, *, reference: Any) -> Grade:
    return Grade.error("reference missing")


MOD = __name__


async def test_deterministic_kinds() -> None:
    r = rubric(
        {"id": "title", "kind": "regex", "pattern": "^# .+", "multiline": True},
        {"id": "whole", "kind": "regex", "pattern": "[a-z# \\n]+", "mode": "fullmatch"},
        {"id": "no-todo", "kind": "regex", "pattern": "todo", "ignore_case": True, "expect": "no_match"},
        {"id": "all", "kind": "contains", "text": ["apple", "pear"]},
        {"id": "any", "kind": "contains", "text": ["kiwi", "pear"], "mode": "any"},
        {"id": "none", "kind": "contains", "text": ["BANANA"], "mode": "none", "ignore_case": True},
        {"id": "words", "kind": "length", "unit": "words", "min": 3, "max": 6},
        {"id": "lines", "kind": "length", "unit": "lines", "max": 2},
        {"id": "chars", "kind": "length", "unit": "chars", "min": 100},
    )
    grade = await r("# fruit\napple and pear", reference=None)
    by_name = {c.name: c for c in grade.checks}
    assert [c.name for c in grade.checks] == [
        "title", "whole", "no-todo", "all", "any", "none", "words", "lines", "chars"
    ]  # fmt: skip
    assert all(
        by_name[n].passed for n in ("title", "whole", "no-todo", "all", "any", "none", "words", "lines")
    )
    assert not by_name["chars"].passed and by_name["chars"].status == "incorrect"
    assert grade.score == pytest.approx(8 / 9) and not grade.passed and grade.status == "partial"
    grade = await r("# TODO banana\napple", reference=None)
    failed = {c.name for c in grade.checks if not c.passed}
    assert failed == {"whole", "no-todo", "all", "any", "none", "chars"}


async def test_weighted_points_report_120_of_183() -> None:
    r = rubric(
        {"id": "a", "kind": "contains", "text": "alpha", "weight": 100},
        {"id": "b", "kind": "contains", "text": "beta", "weight": 20},
        {"id": "c", "kind": "contains", "text": "gamma", "weight": 63},
        {"id": "info", "kind": "length", "max": 1, "weight": 0},
    )
    grade = await r("alpha beta", reference=None)
    assert rubric_points(grade) == (120.0, 183.0)
    assert grade.score == pytest.approx(120 / 183)
    assert grade.reason.startswith("120/183 points")
    assert len(grade.checks) == 4 and {c.weight for c in grade.checks} == {100, 20, 63, 0}
    full = await r("alpha beta gamma delta", reference=None)
    assert full.passed and full.score == 1.0 and full.status == "correct"  # a 0-weight miss costs nothing


async def test_threshold_and_required() -> None:
    checks = (
        {"id": "must", "kind": "contains", "text": "yes", "required": True},
        {"id": "nice1", "kind": "contains", "text": "a", "weight": 3},
        {"id": "nice2", "kind": "contains", "text": "b", "weight": 3},
    )
    r = rubric(*checks, pass_threshold=0.5)
    ok = await r("yes a", reference=None)
    assert ok.passed and ok.status == "partial" and ok.score == pytest.approx(4 / 7)
    blocked = await r("a b", reference=None)
    assert blocked.score == pytest.approx(6 / 7) and not blocked.passed
    assert "required check(s) failed: must" in blocked.reason
    strict = rubric(*checks)
    assert not (await strict("yes a", reference=None)).passed
    assert (await strict("yes a b", reference=None)).passed


async def test_grader_kind_uses_task_or_fixed_reference() -> None:
    r = rubric(
        {"id": "task-ref", "kind": "grader", "grader": "exact", "options": {"kind": "integer"}},
        {"id": "fixed", "kind": "grader", "grader": "exact", "options": {"kind": "integer"}, "reference": 7},
    )
    grade = await r("Answer: 7", reference="7")
    assert grade.passed
    grade = await r("Answer: 8", reference="8")
    assert [c.passed for c in grade.checks] == [True, False]
    assert grade.checks[1].reason.startswith("grader exact")


async def test_registered_grader() -> None:
    class Always:
        def __init__(self, score: float) -> None:
            self.score = score

        async def __call__(self, response: str, *, reference: Any) -> Grade:
            return Grade.from_score(self.score)

    register_grader("test-always", Always, replace=True)
    with pytest.raises(ValueError, match="already registered"):
        register_grader("exact", Always)
    grade = await rubric({"id": "g", "kind": "grader", "grader": "test-always", "options": {"score": 0.5}})(
        "x", reference=None
    )
    assert grade.score == 0.5 and grade.checks[0].status == "partial"


async def test_function_kind() -> None:
    r = rubric(
        {"id": "bool", "kind": "function", "function": f"{MOD}:starts_with_ref"},
        {"id": "float", "kind": "function", "function": f"{MOD}:half", "options": {"value": 0.75}},
        {"id": "grade", "kind": "function", "function": f"{MOD}:async_grade"},
    )
    grade = await r("hello world", reference="hello")
    assert [c.score for c in grade.checks] == [1.0, 0.75, 0.25]
    assert grade.score == pytest.approx(2.0 / 3) and not grade.passed


@pytest.mark.parametrize("func", ["broken", "returns_junk", "failing_grade"])
async def test_a_crashing_check_is_an_error_never_a_zero(func: str) -> None:
    checks = (
        {"id": "ok", "kind": "contains", "text": "x"},
        {"id": "f", "kind": "function", "function": f"{MOD}:{func}"},
    )
    grade = await rubric(*checks)("x", reference=None)
    assert grade.status == "error" and grade.is_error and not grade.passed and grade.score == 0
    assert grade.checks[1].status == "error" and "f:" in grade.reason
    zero = await rubric(*checks, on_error="zero")("x", reference=None)
    assert zero.status == "partial" and zero.score == 0.5 and not zero.passed
    assert "not graded (scored 0): f" in zero.reason


async def test_long_and_non_text_responses() -> None:
    r = rubric({"id": "c", "kind": "contains", "text": "a", "mode": "none"}, max_response_chars=10)
    assert (await r("b" * 11, reference=None)).status == "incorrect"
    assert (await r(None, reference=None)).status == "error"  # type: ignore[arg-type]
