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


async def test_a_check_that_raises_on_the_response_is_a_counted_zero() -> None:
    """A check that raises on a response is a grader bug met on it: that check scores 0 and the
    grade says ``grader_failed`` first (counted apart), never an error a response hides behind."""
    checks = (
        {"id": "ok", "kind": "contains", "text": "x"},
        {"id": "f", "kind": "function", "function": f"{MOD}:broken"},
    )
    grade = await rubric(*checks)("x", reference=None)
    assert grade.status == "partial" and grade.score == 0.5 and not grade.passed and not grade.is_error
    assert grade.grader_failed and grade.reason.startswith("grader_failed: check(s) f raised")
    assert grade.checks[1].status == "incorrect" and "KeyError" in grade.checks[1].reason


@pytest.mark.parametrize("func", ["returns_junk", "failing_grade"])
async def test_a_broken_check_is_an_error_never_a_zero(func: str) -> None:
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


# -- regex checks run under a hard timeout, off the event loop --------------------------------------
async def test_catastrophic_regex_times_out_without_blocking_the_loop() -> None:
    import asyncio
    import time

    r = rubric(
        {"id": "evil", "kind": "regex", "pattern": "(a+)+$", "timeout_s": 0.5},
        {"id": "fine", "kind": "contains", "text": "a"},
    )
    await r("warm the worker up", reference=None)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.monotonic()
    grade = await r("a" * 40 + "!", reference=None)  # backtracks for hours in-process
    elapsed = time.monotonic() - started
    task.cancel()
    assert elapsed < 5, elapsed
    assert ticks >= 5  # the event loop kept running while the regex did not
    evil = grade.checks[0]
    # the response made the pattern run away: a counted failure of the response, not an error
    assert evil.status == "incorrect" and not evil.passed and "ran past 0.5s" in evil.reason
    assert evil.reason.startswith("timeout:")
    assert not grade.is_error and not grade.passed and grade.score < 1
    assert grade.checks[1].passed  # the other checks are still reported
    again = await r("aaa", reference=None)  # the killed worker was replaced
    assert again.passed and again.checks[0].reason.startswith("matches /(a+)+$/")


async def test_regex_checks_use_an_injected_pool() -> None:
    from graders.pool import WorkerPool

    spec = {"id": "t", "checks": [{"id": "r", "kind": "regex", "pattern": "^x"}]}
    with WorkerPool(size=1, memory_mb=512) as pool:
        r = load_rubric(spec, pool=pool)
        assert (await r("xyz", reference=None)).passed
        assert not (await r("yz", reference=None)).passed
        assert len(pool.pids()) == 1
    closed = await r("xyz", reference=None)  # a closed pool is a check error, not a verdict
    assert closed.status == "error" and "could not run" in closed.checks[0].reason


# -- a grader check's options become the grader's option classes at load time -----------------------
async def test_qa_equivalence_options_are_converted_on_load() -> None:
    from graders.qa.equivalence import EquivalenceOptions
    from graders.rubric.checks import build_check
    from graders.rubric.spec import GraderCheck

    def qa(**options: Any) -> Rubric:
        return rubric({"id": "qa", "kind": "grader", "grader": "qa", "options": options})

    default, no_dates = qa(), qa(equivalence={"dates": False})
    grade = await no_dates("June 8, 1978", reference=["1978"])
    assert grade.status in ("correct", "incorrect") and not grade.is_error, grade.reason
    assert not grade.passed and (await default("June 8, 1978", reference=["1978"])).passed
    check = build_check(GraderCheck(id="q", kind="grader", grader="qa", options={"equivalence": {}}))
    assert (await check("Paris", ["Paris"])).passed
    from graders.rubric.registry import make_grader

    built: Any = make_grader("qa", {"equivalence": {"dates": False}, "max_answer_chars": "80"})
    assert built.equivalence == EquivalenceOptions(dates=False) and built.max_answer_chars == 80


@pytest.mark.parametrize(
    ("grader", "options", "expected"),
    [
        ("qa", {"equivalence": {"datez": False}}, "equivalence.datez: unknown option"),
        ("qa", {"equivalence": {"dates": "maybe"}}, "equivalence.dates: Input should be a valid boolean"),
        ("qa", {"nope": 1}, "nope: unknown option"),
        ("math", {"extract": {"max_boxd": 2}}, "extract.max_boxd: unknown option"),
        ("exact", {"bogus": 1}, "bogus: unknown option"),
    ],
)
def test_bad_grader_options_fail_on_load(grader: str, options: dict[str, Any], expected: str) -> None:
    from graders.rubric import RubricError

    with pytest.raises(RubricError, match=f"cannot build grader '{grader}'") as info:
        rubric({"id": "g", "kind": "grader", "grader": grader, "options": options})
    assert expected in str(info.value)


def test_math_options_nest() -> None:
    from graders.rubric.registry import make_grader

    built: Any = make_grader("math", {"strict": False, "extract": {"max_boxed": 1}})
    assert built.options.strict is False and built.options.extract.max_boxed == 1
