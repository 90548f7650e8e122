"""The cost screen: costly answers are refused before evaluation, honest answers never are."""

from __future__ import annotations

import asyncio
import json

import pytest

from graders.attacks.costly import COSTLY_CLASSES, costly_answers
from graders.math import MathGrader, check_inline
from graders.math.cost import CostLimits, costly_reason
from graders.math.normalize import clean_answer
from graders.math.screen import screen_answer
from graders.pool import WorkerPool
from hub.review.testing import shared_data_dir

HONEST = [
    "\\frac{\\sqrt{3}}{2}",
    "2^{2005}",
    "\\sin^2 x + \\cos^2 x",
    "e^{x^2}",
    "\\sin(\\ln x)",
    "\\Gamma(\\frac{1}{2})",
    "(x+1)^{10}",
    "\\binom{10}{3}",
    "7!!",
    "\\left(\\frac{1}{2}\\right)^{10}",
    "\\log_{2}(3)+\\log_{3}(2)",
    "\\sqrt[3]{2}",
    "-x^{2}+3",
    "\\zeta(3)",
    "100!",
]


@pytest.mark.parametrize("klass", sorted(COSTLY_CLASSES))
def test_every_generated_costly_answer_is_refused(klass: str) -> None:
    answers = [a for k, a in costly_answers(60, seed=7) if k == klass]
    let_through = [a for a in answers if screen_answer(clean_answer(a)) is None]
    assert not let_through, let_through[:5]


@pytest.mark.parametrize("answer", HONEST)
def test_honest_forms_pass_the_screen(answer: str) -> None:
    assert screen_answer(clean_answer(answer)) is None


def test_every_benchmark_reference_passes_the_screen() -> None:
    try:
        data = shared_data_dir()
    except FileNotFoundError:
        pytest.skip("shared test data not available")
    refused = []
    for name in ("math500", "aime24", "amc23", "gsm8k"):
        path = data / name / "test.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            answer = str(json.loads(line)["answer"]).split("####")[-1]
            reason = screen_answer(clean_answer(answer))
            if reason is not None:
                refused.append((name, answer, reason))
    assert not refused, refused[:5]


def test_limits_are_limits() -> None:
    """Each limit decides: a little under passes, a little over is refused."""
    loose = CostLimits(max_function_depth=3, max_function_work=100)
    assert costly_reason("\\tan(\\tan(\\tan(1)))") is not None
    assert costly_reason("\\tan(\\tan(\\tan(1)))", loose) is None
    assert costly_reason("(x+1)^{40}") is None and costly_reason("(x+1)^{41}") is not None
    assert costly_reason("1000!") is None and costly_reason("1001!") is not None


def test_unreadable_text_is_never_refused_and_never_raises() -> None:
    for text in ("", "}{", "\\left(", "^^^", "!!!", "\\frac", "((((", "x^", "\\sqrt[", "\u00b3\u2460"):
        assert costly_reason(text) is None


def test_a_costly_answer_is_incorrect_without_costing_a_worker(math_pool: WorkerPool) -> None:
    """Refused in the screen: a counted wrong answer, and no worker killed for it."""
    grader = MathGrader(pool=math_pool, timeout=5.0)
    replaced = math_pool.replaced

    async def run() -> list[str]:
        return [
            (await grader(f"\\boxed{{{a}}}", reference="x^{2}+1")).reason
            for _, a in costly_answers(2, seed=11)
        ]

    reasons = asyncio.run(run())
    assert all(r.startswith("too_costly:") for r in reasons), reasons
    assert math_pool.replaced == replaced
    verdict = check_inline("\\boxed{9^{9^{9}}}", reference="5")
    assert verdict.to_grade().status == "incorrect" and verdict.reason.startswith("too_costly:")
