"""False passes found by an audit, each fixed by a general rule and pinned here.

Every row of ``FALSE_PASSES`` must fail; the rule that fails it is named in the comment above
its group (see ``docs/graders-math.md``). ``MUST_PASS`` holds the forms those rules must keep
accepting, and the false negatives fixed alongside.
"""

from __future__ import annotations

import pytest

from graders.math import MathOptions, check_inline

BOTH = (False, True)
STRICT = (True,)
LENIENT = (False,)

# (response, reference, the strict settings under which it must fail)
FALSE_PASSES: list[tuple[str, str, tuple[bool, ...]]] = [
    # numbers are the rationals they write; no default tolerance against an exact reference
    ("\\boxed{1591.001}", "1591", BOTH),
    ("\\boxed{999999.5}", "1000000", BOTH),
    ("\\boxed{17.99999}", "18", BOTH),
    ("\\boxed{0.333}", "\\frac{1}{3}", BOTH),
    ("\\boxed{0.8660254}", "\\frac{\\sqrt{3}}{2}", BOTH),
    ("\\boxed{3.14159265}", "\\pi", BOTH),
    # words after a number: an allow-list of units; magnitude words scale the value
    ("\\boxed{1591 squared}", "1591", BOTH),
    ("\\boxed{1591 thousand}", "1591", BOTH),
    ("\\boxed{5 million}", "5", BOTH),
    ("\\boxed{1591 if even}", "1591", BOTH),
    ("\\boxed{0 if even}", "0", BOTH),  # not 0 * i * f * e * v * e * n
    # a parenthesised comma list is a tuple, not a thousands separator
    ("\\boxed{(1,592)}", "1592", BOTH),
    # percent is a unit: 1591% is 1591, never also 15.91
    ("\\boxed{1591\\%}", "15.91", BOTH),
    # an equation states a value only when one side is a name; chained equations state none
    ("\\boxed{2 = 1591}", "1591", BOTH),
    ("\\boxed{a = 1592 = 1591}", "1591", BOTH),
    ("\\boxed{1 = \\sqrt{2}}", "\\sqrt{2}", BOTH),
    ("\\boxed{2 = x + 1}", "x + 1", BOTH),
    ("\\boxed{y = 2x + 3 = 5}", "y = 2x + 3", BOTH),
    # \approx is a hedge
    ("\\boxed{1591 \\approx 1592}", "1591", BOTH),
    ("\\boxed{\\frac{\\sqrt{3}}{2} \\approx \\frac{1}{2}}", "\\frac{\\sqrt{3}}{2}", BOTH),
    # \text{} holding a number or a non-unit word is not a unit
    ("\\boxed{1591 \\text{ (or 1592)}}", "1591", BOTH),
    ("\\boxed{1591 \\text{(alternatively 1592)}}", "1591", BOTH),
    ("\\boxed{1591 \\text{ (not 1592)}}", "1591", BOTH),
    ("\\boxed{5 \\text{ if } n \\text{ is even}}", "5", BOTH),
    ("\\boxed{1 \\pm \\sqrt{19} \\text{ (or 1 \\pm \\sqrt{19}+1)}}", "1 \\pm \\sqrt{19}", BOTH),
    ("\\boxed{1591_{2}}", "1591", BOTH),
    # strict: simplest form (lowest terms, no square factor, no function the reference lacks)
    ("\\boxed{\\frac{2}{4}}", "\\frac{1}{2}", STRICT),
    ("\\boxed{\\frac{3182}{2}}", "1591", STRICT),
    ("\\boxed{3182/2}", "1591", STRICT),
    ("\\boxed{\\frac{3182}{2}}", "\\frac{\\sqrt{3}}{2}", BOTH),
    ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", STRICT),
    ("\\boxed{\\frac{4\\sqrt{2}}{2}}", "2\\sqrt{2}", STRICT),
    ("\\boxed{\\sqrt{16}}", "4", STRICT),
    ("\\boxed{\\sin(\\pi/3)}", "\\frac{\\sqrt{3}}{2}", STRICT),
    ("\\boxed{\\log_2 8}", "3", STRICT),
    # a copy of the question (MATH-500 #74): a bare final line counts only in final form
    ("Simplify\n\\[\\frac{\\sec x}{\\sin x} - \\frac{\\sin x}{\\cos x}.\\]", "\\cot x", BOTH),
    # a draft answer inside <think> is not the answer; unfinished thinking gives none
    ("<think>It is \\boxed{5}.</think>\nSo the answer is \\boxed{4}.", "5", BOTH),
    ("<think>Maybe \\boxed{5}", "5", BOTH),
]


@pytest.mark.parametrize(
    ("response", "reference", "strict"),
    [(r, ref, s) for r, ref, modes in FALSE_PASSES for s in modes],
)
def test_audited_false_pass_fails(response: str, reference: str, strict: bool) -> None:
    verdict = check_inline(response, reference=reference, options=MathOptions(strict=strict))
    assert not verdict.passed, verdict
    assert verdict.status in ("incorrect", "unparseable", "no_answer"), verdict


# (response, reference, options): forms the rules above must keep accepting
MUST_PASS: list[tuple[str, str, MathOptions]] = [
    ("\\boxed{0.5}", "\\frac{1}{2}", MathOptions(strict=True)),
    ("\\boxed{\\frac{1}{2}}", "0.5", MathOptions(strict=True)),
    ("\\boxed{1591.0}", "1591", MathOptions(strict=True)),
    ("\\boxed{1,591}", "1591", MathOptions(strict=True)),
    ("\\boxed{5 million}", "5000000", MathOptions(strict=True)),
    ("\\boxed{18 \\text{ dollars}}", "18", MathOptions(strict=True)),
    ("\\boxed{15 \\text{ cm}^2}", "15", MathOptions(strict=True)),
    ("\\boxed{160 minutes}", "160", MathOptions(strict=True)),
    ("\\boxed{25\\%}", "25", MathOptions(strict=True)),
    ("\\boxed{\\textbf{(113) }}", "113", MathOptions(strict=True)),
    ("\\boxed{(C)}", "\\text{(C)}", MathOptions(strict=True)),
    ("\\boxed{x = 5}", "5", MathOptions(strict=True)),
    ("\\boxed{5 = x}", "5", MathOptions(strict=True)),
    ("\\boxed{f(2) = 5}", "5", MathOptions(strict=True)),
    ("\\boxed{k = \\frac{1}{2}}", "0.5", MathOptions(strict=True)),
    ("\\boxed{x = 1, x = -2}", "1,-2", MathOptions(strict=True)),
    ("\\boxed{(x, y) = (1, 2)}", "(1,2)", MathOptions(strict=True)),
    ("\\boxed{y = 2x + 3}", "y = 2x + 3", MathOptions(strict=True)),
    ("\\boxed{x > 2}", "(2,\\infty)", MathOptions(strict=True)),
    ("\\boxed{x \\geq -3}", "[-3, \\infty)", MathOptions(strict=True)),
    ("\\boxed{1 \\le x < 2}", "[1,2)", MathOptions(strict=True)),
    ("\\boxed{[1, 2)}", "1 \\le x < 2", MathOptions(strict=True)),
    ("\\boxed{2\\sqrt{2}}", "2\\sqrt{2}", MathOptions(strict=True)),
    ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}", MathOptions(strict=True)),
    ("\\boxed{\\frac{2}{4}}", "\\frac{1}{2}", MathOptions()),
    ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", MathOptions()),
    ("\\boxed{0.3333333}", "\\frac{1}{3}", MathOptions(rel_tol=1e-6)),
    ("\\boxed{3.1416}", "3.14159265", MathOptions(rel_tol=1e-4)),
    ("<think>Maybe \\boxed{3}? No.</think>\nThe answer is \\boxed{5}.", "5", MathOptions(strict=True)),
    ("reasoning without a tag</think>\n\\boxed{5}", "5", MathOptions(strict=True)),
]


@pytest.mark.parametrize(("response", "reference", "options"), MUST_PASS)
def test_equivalent_form_still_passes(response: str, reference: str, options: MathOptions) -> None:
    verdict = check_inline(response, reference=reference, options=options)
    assert verdict.passed, verdict


@pytest.mark.parametrize(
    "response",
    [
        "\\boxed{1591}\n\nFinal Answer: 1592",
        "Answer: 1592\n\\boxed{1591}",
        "\\boxed{1591}\n#### 1592",
        "\\boxed{1591}\n**Final Answer:** 1592",
    ],
)
def test_an_answer_in_another_form_that_contradicts_the_box_fails(response: str) -> None:
    verdict = check_inline(response, reference="1591")
    assert verdict.status == "incorrect" and "different forms" in verdict.reason, verdict


@pytest.mark.parametrize(
    "response",
    [
        "The answer is $\\boxed{1591}$.",
        "Answer: \\boxed{1591}",
        "The answer to part (a) is the product, so \\boxed{1591}",
        "#### 1591\nAnswer: 1591",
        # running text is not cross-checked: worked solutions state intermediate results that way
        "So the answer is $\\frac{1}{2}=0.5$ of the total.\n\\boxed{1591}",
        "\\boxed{1591}\nAnswer: the number of ways to choose 2 rows",
    ],
)
def test_the_same_answer_in_several_forms_passes(response: str) -> None:
    verdict = check_inline(response, reference="1591")
    assert verdict.passed, verdict


@pytest.mark.parametrize(
    ("response", "reference", "passes"),
    [
        ("\\boxed{y = 5}", "x = 5", False),
        ("\\boxed{x = 1, z = 2}", "x = 1, y = 2", False),
        ("\\boxed{x = 5}", "x = 5", True),
        ("\\boxed{x_1 = 3}", "x_{1} = 3", True),
        ("\\boxed{5}", "x = 5", True),
    ],
)
def test_an_equation_must_name_the_reference_variable(response: str, reference: str, passes: bool) -> None:
    assert check_inline(response, reference=reference).passed is passes
