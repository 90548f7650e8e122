"""graders.math public API: check/acheck/check_inline, MathGrader as a Grader, options, modes."""

from __future__ import annotations

import asyncio

import pytest

from graders import Grader
from graders.math import (
    MathGrader,
    MathOptions,
    MathVerdict,
    acheck,
    check,
    check_inline,
)
from graders.pool import WorkerPool


def test_check_and_acheck_agree(math_pool: WorkerPool) -> None:
    response = "so the answer is $\\boxed{\\frac{1}{2}}$"
    sync = check(response, reference="0.5", pool=math_pool)
    asyn = asyncio.run(acheck(response, reference="0.5", pool=math_pool))
    assert sync == asyn == check_inline(response, reference="0.5")
    assert sync.passed and sync.status == "correct" and sync.extracted == "\\frac{1}{2}"


def test_overrides_build_options(math_pool: WorkerPool) -> None:
    assert check("\\boxed{100+1}", reference="101", pool=math_pool).passed
    assert not check("\\boxed{100+1}", reference="101", pool=math_pool, strict=True).passed
    with pytest.raises(TypeError):
        check("\\boxed{1}", reference="1", pool=math_pool, no_such_option=True)


def test_statuses() -> None:
    assert check_inline("", reference="1").status == "no_answer"
    assert check_inline("\\boxed{}", reference="1").status == "no_answer"
    assert check_inline("\\boxed{2}", reference="1").status == "incorrect"
    assert check_inline("\\boxed{@@@ ###}", reference="x+1").status == "unparseable"
    assert check_inline("\\boxed{" + "1" * 3000 + "}", reference="1").status == "unparseable"
    too_long = check_inline("a" * 300_000 + "\\boxed{1}", reference="1")
    assert too_long.status == "no_answer" and "longer" in too_long.reason
    bad_reference = check_inline("\\boxed{1}", reference="\\frac{")
    assert bad_reference.status == "error"
    with pytest.raises(TypeError):
        check_inline("\\boxed{1}", reference=None)


async def test_math_grader_is_a_grader(math_pool: WorkerPool) -> None:
    grader = MathGrader(MathOptions(strict=True), pool=math_pool, timeout=3.0)
    assert isinstance(grader, Grader)
    good = await grader("\\boxed{42}", reference="42")
    assert good.passed and good.score == 1.0 and good.status == "correct" and good.extracted == "42"
    bad = await grader("\\boxed{41}", reference="42")
    assert not bad.passed and bad.status == "incorrect"
    none = await grader("no idea", reference="42")
    assert none.status == "incorrect" and "no_answer" in none.reason
    verdict = await grader.verdict("no idea", reference="42")
    assert verdict.status == "no_answer"
    grades = await asyncio.gather(*(grader(f"\\boxed{{{i}}}", reference="3") for i in range(6)))
    assert [g.passed for g in grades] == [i == 3 for i in range(6)]


async def test_a_timeout_on_the_answer_is_a_counted_wrong_answer(math_pool: WorkerPool) -> None:
    """The check's clock starts when a ready worker has the job, so a timeout is the answer's
    doing: an incorrect grade (score 0, counted in means), never an error summaries skip."""
    # an answer the cost screen lets through (cheap enough) that still takes far over 20 ms
    grader = MathGrader(pool=math_pool, timeout=0.02)
    grade = await grader("\\boxed{\\tan(\\tan(x))}", reference="x^{2}+1")
    assert grade.status == "incorrect" and not grade.is_error and grade.score == 0.0
    assert grade.reason.startswith("timeout:")
    assert (await grader("\\boxed{5}", reference="5")).passed  # the pool recovered


def test_verdict_to_grade() -> None:
    assert MathVerdict.correct("1").to_grade().status == "correct"
    assert MathVerdict.fail("timeout", "slow").to_grade().status == "incorrect"
    assert MathVerdict.fail("error", "bug").to_grade().status == "error"
    assert MathVerdict.fail("unparseable", "junk", "@@").to_grade().status == "incorrect"
    with pytest.raises(ValueError):
        MathVerdict.fail("correct", "no")


def test_options_are_validated_and_frozen() -> None:
    with pytest.raises(ValueError):
        MathOptions(rel_tol=-1)
    with pytest.raises(ValueError):
        MathOptions(multi_answer="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        MathOptions(mode="vibes")  # type: ignore[arg-type]
    options = MathOptions()
    with pytest.raises(AttributeError):
        options.strict = True  # type: ignore[misc]


def test_root_mode_checks_by_substitution() -> None:
    root = MathOptions(mode="root")
    equation = "x^2 - 5x + 6 = 0"
    assert check_inline("\\boxed{2}", reference=equation, options=root).passed
    assert check_inline("\\boxed{x = 3}", reference=equation, options=root).passed
    assert check_inline("\\boxed{\\{2, 3\\}}", reference=equation, options=root).passed
    assert not check_inline("\\boxed{4}", reference=equation, options=root).passed
    assert not check_inline("\\boxed{\\{2, 4\\}}", reference=equation, options=root).passed
    assert check_inline("\\boxed{\\sqrt{2}}", reference="x^2 = 2", options=root).passed
    assert check_inline("\\boxed{5}", reference="x + y = 1", options=root).status == "error"


def test_identity_mode_checks_by_substitution() -> None:
    identity = MathOptions(mode="identity")
    assert check_inline("\\boxed{\\sin^2 x}", reference="1 - \\cos^2 x", options=identity).passed
    assert check_inline("\\boxed{(a+b)^2}", reference="a^2 + 2ab + b^2", options=identity).passed
    assert not check_inline("\\boxed{a^2 + b^2}", reference="(a+b)^2", options=identity).passed
    assert not check_inline("\\boxed{x + y}", reference="x + 1", options=identity).passed
