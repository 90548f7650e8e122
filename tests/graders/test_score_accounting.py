"""Score accounting: a grading failure caused by the response scores 0, like a wrong answer.

Summaries leave ``error`` grades out of the mean. If a timeout on a model-supplied expression
were an error, a policy could swap its wrong answers for timeout bait and raise its mean. These
tests grade the same half-right policy twice, once answering the other half wrongly and once with
bait, and require the bait policy never to score better. Verified to fail before the fix: with
``MathVerdict.to_grade`` mapping ``timeout`` to ``Grade.timeout`` the bait mean is 1.0 > 0.5.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from graders.grade import Grade
from graders.math import MathGrader
from graders.math.check import check_inline
from graders.pool import PoolConfig, WorkerPool

# nested functions and towers whose evaluation outlives any sane per-check budget
BAIT = [
    r"\boxed{\tan(\tan(\tan(\tan(\tan(\tan(1))))))}",
    r"\boxed{\sin(\cos(\tan(\exp(\sin(\cos(\tan(\exp(2))))))))}",
    r"\boxed{9^{9^{9}}}",
    r"\boxed{\binom{10^{10}}{10^{5}}}",
]
REFERENCES = ["\\frac{\\pi}{3}", "12", "\\sqrt{2}", "7"]


def _summary_mean(grades: list[Grade]) -> float:
    """The mean a run summary reports: errors are left out, everything else counts."""
    counted = [g.score for g in grades if not g.is_error]
    return sum(counted) / len(counted) if counted else float("nan")


def _grade_all(grader: MathGrader, answers: list[tuple[str, str]]) -> list[Grade]:
    async def run() -> list[Grade]:
        return [await grader(resp, reference=ref) for resp, ref in answers]

    return asyncio.run(run())


def test_timeout_bait_never_scores_better_than_a_wrong_answer(math_pool: WorkerPool) -> None:
    grader = MathGrader(pool=math_pool, timeout=1.0)
    right = [(f"\\boxed{{{ref}}}", ref) for ref in REFERENCES]
    wrong = [("\\boxed{123456789}", ref) for ref in REFERENCES]
    bait = [(BAIT[i % len(BAIT)], ref) for i, ref in enumerate(REFERENCES)]
    honest = _grade_all(grader, right + wrong)
    gaming = _grade_all(grader, right + bait)
    bait_grades = gaming[len(right) :]
    assert any(g.reason.startswith(("timeout", "too_costly")) for g in bait_grades), bait_grades
    for g in bait_grades:
        assert g.status == "incorrect" and g.score == 0.0 and not g.is_error, g
    assert _summary_mean(gaming) <= _summary_mean(honest) == 0.5


def test_a_crash_mid_check_is_the_answers_failure_but_a_dead_pool_is_an_error() -> None:
    """A worker that dies while checking an answer scores 0; a pool that cannot run is an error."""
    from graders.math.check import _pooled_failure
    from graders.pool import WorkerDied

    crashed = _pooled_failure(WorkerDied("the worker exited", during_call=True), 1.0).to_grade()
    assert crashed.status == "incorrect" and not crashed.is_error
    unreachable = _pooled_failure(WorkerDied("did not start"), 1.0).to_grade()
    assert unreachable.is_error


def _suicide(_: str, **__: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_the_pool_marks_a_death_during_the_call() -> None:
    from graders.pool import WorkerDied

    with WorkerPool(PoolConfig(size=1, memory_mb=None)) as pool:
        with pytest.raises(WorkerDied) as info:
            pool.submit(_suicide, "x", timeout=10.0)
        assert info.value.during_call
        assert pool.submit(check_inline, "\\boxed{2}", reference="2", timeout=30.0).passed
