"""Math classes: false passes through structures and honest forms that failed.

Each case failed on the code before the fix (the module's docstring of each defence names it).
"""

from __future__ import annotations

import pytest

from graders.math import MathOptions, check_inline

SQRT2 = "1.4142135623730951"
THIRD = "0.3333333333333333"

# a decimal for a non-terminating exact value, inside every structure (graders.math.decimals)
DECIMAL_WRAPPED = [
    (rf"\boxed{{\pm {SQRT2}}}", r"\pm\sqrt{2}"),
    (rf"\boxed{{({SQRT2}, 3)}}", r"(\sqrt{2}, 3)"),
    (rf"\boxed{{[{SQRT2}, 3]}}", r"[\sqrt{2}, 3]"),
    (rf"\boxed{{(-\infty, {SQRT2})}}", r"(-\infty, \sqrt{2})"),
    (rf"\boxed{{\{{{THIRD}, 3\}}}}", r"\{\frac{1}{3}, 3\}"),
    (rf"\boxed{{{SQRT2}, 3}}", r"\sqrt{2}, 3"),
    (
        rf"\boxed{{\begin{{pmatrix}} {SQRT2} \\ 1 \end{{pmatrix}}}}",
        r"\begin{pmatrix} \sqrt{2} \\ 1 \end{pmatrix}",
    ),
    (rf"\boxed{{-(-{SQRT2})}}", r"\sqrt{2}"),
    (rf"\boxed{{{SQRT2} + 0}}", r"\sqrt{2}"),
    (r"\boxed{1.0471975511965976 \cdot 1}", r"\frac{\pi}{3}"),
]

# a set or bare list is not an interval or a tuple, and back (graders.math.structure.kind_mismatch)
KIND_SWAPS = [
    (r"\boxed{\{-2, 3\}}", "(-2, 3)"),
    (r"\boxed{-2, 3}", "(-2, 3)"),
    (r"\boxed{\{-2, \infty\}}", r"(-2, \infty)"),
    (r"\boxed{-2, \infty}", r"(-2, \infty)"),
    (r"\boxed{(2, 3)}", r"\{2, 3\}"),
    (r"\boxed{(2, 3)}", "2, 3"),
]

# hedges that add a wrong value to a multi-solution reference (graders.math.solutions)
MULTI_HEDGES = [
    (r"\boxed{x = 2 \text{ or } x = 3 \text{ or } x = 4}", "2, 3"),
    (r"\boxed{2, 3, 4}", "2, 3"),
    (r"$x = \boxed{2}$, $x = \boxed{3}$ or $x = \boxed{4}$", "2, 3"),
    (r"\boxed{\pm 3}", "3"),
    (r"\boxed{2}", "2, 3"),
    (r"\boxed{1 \pm 2}", "3, -1, 5"),
    (r"\boxed{2 + 3 = 204}", "204"),  # an equation of numbers states no value
    (r"\boxed{m + n = 205}", "204"),
    (r"\boxed{0 = 0}", "y = 2x + 1"),
    (r"\boxed{x(y - 2x - 1) = 0}", "y = 2x + 1"),
]

HONEST = [
    ("Final Answer: The final answer is $7$. I hope it is correct.", "7"),
    ("Final answer: the answer is 7", "7"),
    ("The final answer is 7.", "7"),
    ("so x = 7.\n#### 7", "7"),
    ("\\boxed{\u22125}", "-5"),
    ("The answer is \u22125.", "-5"),
    ("#### \u221212", "-12"),
    ("\\boxed{(\u22122, 3)}", "(-2, 3)"),
    ("The answer is 1\u2009000\u2009000", "1000000"),
    ("The answer is 12\u202f345.", "12345"),
    ("The answer is \uff14\uff12.", "42"),
    (r"\boxed{m + n = 204}", "204"),
    (r"\boxed{a + b + c = 37}", "37"),
    (r"\boxed{2y = 4x + 2}", "y = 2x + 1"),
    (r"\boxed{y - 2x = 1}", "y = 2x + 1"),
    (r"\boxed{-y = -2x - 1}", "y = 2x + 1"),
    (r"\boxed{x = 2 \text{ or } x = 3}", "2, 3"),
    (r"\boxed{x = 2 \text{ or } x = 3}", "x = 2, 3"),
    (r"\boxed{3 \text{ and } 2}", "2, 3"),
    (r"\boxed{\pm 3}", "3, -3"),
    (r"\boxed{3, -3}", r"\pm 3"),
    (r"\boxed{1 \pm \sqrt{2}}", r"1 + \sqrt{2}, 1 - \sqrt{2}"),
    (r"$x = \boxed{2}$ or $x = \boxed{3}$", "2, 3"),
    (r"\boxed{\{2, 3\}}", "2, 3"),
    (r"\boxed{x = 2, y = 3}", "(2, 3)"),
    (r"\boxed{(1.5, 2)}", r"(\frac{3}{2}, 2)"),
    (r"\boxed{\{1.25, 2\}}", r"\{\frac{5}{4}, 2\}"),
]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(("response", "reference"), DECIMAL_WRAPPED)
def test_a_decimal_approximation_fails_in_any_structure(response: str, reference: str, strict: bool) -> None:
    verdict = check_inline(response, reference=reference, options=MathOptions(strict=strict))
    assert not verdict.passed, verdict


@pytest.mark.parametrize(("response", "reference"), KIND_SWAPS + MULTI_HEDGES)
def test_kind_swaps_and_hedges_fail(response: str, reference: str) -> None:
    verdict = check_inline(response, reference=reference)
    assert not verdict.passed, verdict


@pytest.mark.parametrize(("response", "reference"), HONEST)
def test_honest_forms_pass(response: str, reference: str) -> None:
    verdict = check_inline(response, reference=reference)
    assert verdict.passed, verdict
