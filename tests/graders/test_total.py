"""graders.total: what an exception raised while grading a response means."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graders.grade import Grade
from graders.pool import PoolClosed, PoolTimeout, WorkerDied, WorkerError
from graders.proof.errors import LeanNotFoundError
from graders.rubric.errors import JudgeError
from graders.total import BrokenReference, TotalGrader, grade_of_exception, total

BUGS: list[Exception] = [
    ValueError("invalid literal for int() with base 10: '\u1369'"),
    IndexError("list index out of range"),
    KeyError("x"),
    TypeError("unsupported operand"),
    ZeroDivisionError("division by zero"),
    RecursionError("maximum recursion depth exceeded"),
    UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"),
    WorkerError("ValueError", "Exceeds the limit (4300 digits)"),
    AssertionError(""),
]
TIMEOUTS: list[Exception] = [
    TimeoutError("regex took too long"),
    PoolTimeout("5s"),
    WorkerDied("killed", during_call=True),
]
INFRASTRUCTURE: list[Exception] = [
    ConnectionError("refused"),
    FileNotFoundError("coqc"),
    ModuleNotFoundError("nltk"),
    PoolClosed("closed"),
    WorkerDied("could not start", during_call=False),
    LeanNotFoundError("lean"),
    JudgeError("endpoint down"),
]


@pytest.mark.parametrize("exc", BUGS, ids=lambda e: type(e).__name__)
def test_a_grader_bug_is_a_counted_zero(exc: Exception) -> None:
    grade = grade_of_exception(exc)
    assert grade.status == "incorrect" and grade.score == 0.0 and not grade.passed
    assert grade.grader_failed and not grade.is_error
    assert grade.reason.startswith("grader_failed: ")


@pytest.mark.parametrize("exc", TIMEOUTS, ids=lambda e: type(e).__name__)
def test_running_out_of_time_on_a_response_is_its_failure(exc: Exception) -> None:
    grade = grade_of_exception(exc)
    assert grade.status == "incorrect" and grade.reason.startswith("timeout:") and not grade.grader_failed


@pytest.mark.parametrize("exc", INFRASTRUCTURE, ids=lambda e: type(e).__name__)
def test_an_infrastructure_failure_stays_an_error(exc: Exception) -> None:
    grade = grade_of_exception(exc)
    assert grade.status == "error" and not grade.grader_failed


class Raising:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        raise self.exc


class Returning:
    async def __call__(self, response: str, *, reference: Any) -> Any:
        return 1.0


def test_total_makes_a_grader_total() -> None:
    grade = asyncio.run(Raising(ValueError("boom"))("x", reference=1))
    assert grade.grader_failed and "ValueError: boom" in grade.reason
    wrapped = asyncio.run(TotalGrader(Returning())("x", reference=1))
    assert wrapped.grader_failed and "returned float" in wrapped.reason


def test_cancellation_goes_through() -> None:
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(Raising(asyncio.CancelledError())("x", reference=1))


def test_grader_failed_is_read_from_the_reason_tag_only() -> None:
    assert Grade.failed("KeyError: 'a'").grader_failed
    assert not Grade.incorrect(reason="no answer: grader_failed: is just text here").grader_failed
    assert not Grade.error("grader_failed: infrastructure errors are never verdicts").grader_failed
    partial = Grade.from_score(0.5, reason="grader_failed: check(s) x raised (scored 0); 1/2 points")
    assert partial.grader_failed and partial.status == "partial"


def test_an_ifeval_checker_that_runs_out_of_time_fails_its_instruction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A library's regular-expression time limit met on the response: that instruction is not
    followed, the others are still checked, and the grader answers with a verdict."""
    from graders.ifeval import IFEvalGrader
    from graders.ifeval.checkers import CHECKERS

    def runs_out(response: str, kwargs: Any, prompt: str) -> bool:
        raise TimeoutError("regular-expression match exceeded its 5.0s time limit")

    monkeypatch.setitem(CHECKERS, "length_constraints:number_sentences", runs_out)
    reference = {
        "prompt": "p",
        "instruction_id_list": ["length_constraints:number_sentences", "punctuation:no_comma"],
        "kwargs": [{"relation": "at least", "num_sentences": 1}, {}],
    }
    grade = asyncio.run(IFEvalGrader()("Mr. A. B. " * 50, reference=reference))
    assert grade.status == "partial" and grade.score == 0.5 and not grade.grader_failed
    assert [c.passed for c in grade.checks] == [False, True]


def test_sentence_splitting_uses_the_standard_engine() -> None:
    """NLTK's regex-engine patterns carry a wall-clock limit that raises; ours are plain re."""
    import re

    from graders.ifeval import _text

    variables = _text._sentence_tokenizer()._lang_vars
    assert isinstance(variables.period_context_re(), re.Pattern)
    assert isinstance(variables._word_tokenizer_re(), re.Pattern)
    assert isinstance(variables.re_boundary_realignment, re.Pattern)
    assert _text.sentences("Mr. Smith went home. He slept! Fine.") == [
        "Mr. Smith went home.",
        "He slept!",
        "Fine.",
    ]


def test_a_broken_reference_is_an_error_not_a_verdict() -> None:
    grade = grade_of_exception(BrokenReference("the task keyword is empty"))
    assert grade.status == "error" and "reference cannot be used" in grade.reason
