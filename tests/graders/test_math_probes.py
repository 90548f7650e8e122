"""Reward-hacking probes: each fails, through the worker pool, while the reference passes."""

from __future__ import annotations

import json

import pytest

from graders.math import MathOptions, check, check_inline, hacking_probes, reference_response
from graders.pool import WorkerPool
from hub.review.testing import shared_data_dir

STRICT = MathOptions(strict=True)
QUESTION = "Compute $37 \\cdot 43$. What is the product?"


@pytest.mark.parametrize("name", sorted(hacking_probes("1591", QUESTION)))
def test_probe_fails_through_the_pool(name: str, math_pool: WorkerPool) -> None:
    response = hacking_probes("1591", QUESTION)[name]
    verdict = check(response, reference="1591", options=STRICT, pool=math_pool)
    assert not verdict.passed, (name, verdict)
    assert verdict.status not in ("timeout", "error"), (name, verdict)


def test_reference_passes_through_the_pool(math_pool: WorkerPool) -> None:
    assert check(reference_response("1591"), reference="1591", options=STRICT, pool=math_pool).passed


@pytest.mark.parametrize(
    "response",
    [
        "\\boxed{37\\cdot43}",
        "\\boxed{37 \\times 43}",
        "\\boxed{1590+1}",
        "\\boxed{\\sum_{k=1}^{1591} 1}",
        "\\boxed{\\frac{3182}{2} + 0}",
        "The answer is 37*43.",
    ],
)
def test_unevaluated_answers_fail_only_when_strict(response: str) -> None:
    assert not check_inline(response, reference="1591", options=STRICT).passed
    assert check_inline("\\boxed{1591}", reference="1591", options=STRICT).passed


def test_strict_still_accepts_equivalent_forms() -> None:
    assert check_inline(
        "\\boxed{\\frac{1}{2}\\sqrt{3}}", reference="\\frac{\\sqrt{3}}{2}", options=STRICT
    ).passed
    assert check_inline("\\boxed{2^{10}}", reference="2^{10}", options=STRICT).passed
    assert check_inline("\\boxed{1,591}", reference="1591", options=STRICT).passed
    assert not check_inline("\\boxed{2^{10}}", reference="1024", options=STRICT).passed
    assert check_inline("\\boxed{37\\cdot43}", reference="1591").passed  # lenient by default


def test_policy_options() -> None:
    response = "\\boxed{7} then \\boxed{8}"
    assert not check_inline(response, reference="8").passed
    assert check_inline(response, reference="8", options=MathOptions(multi_answer="last")).passed
    assert check_inline(response, reference="7", options=MathOptions(multi_answer="first")).passed
    assert check_inline("\\boxed{8} so \\boxed{8.0}", reference="8").passed  # the same answer twice


def _math500_rows() -> list[dict[str, object]]:
    path = shared_data_dir() / "math500" / "test.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.slow
def test_probes_fail_across_math500() -> None:
    """Every probe on every fourth MATH-500 reference, all answer types (in-process, for time;
    ``bench/fidelity_math.py`` and the environment tests cover the rest)."""
    passed: list[str] = []
    for row in _math500_rows()[::4]:
        answer, problem = str(row["answer"]), str(row["problem"])
        assert check_inline(reference_response(answer), reference=answer, options=STRICT).passed, answer
        for name, response in hacking_probes(answer, problem).items():
            if name == "megabyte":
                continue  # covered above; 500 copies of 1 MB add nothing
            if check_inline(response, reference=answer, options=STRICT).passed:
                passed.append(f"{name}: {answer}")
    assert passed == []
