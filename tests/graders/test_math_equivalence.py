"""graders.math equivalence: what counts as the same answer, and what does not (in-process)."""

from __future__ import annotations

import pytest

from graders.math import MathOptions, check_inline
from graders.math.normalize import clean_answer, read_letter, read_number, read_text

SAME = [
    # integers, separators, decimals, scientific notation
    ("1591", "1,591"),
    ("1591", "1591.0"),
    ("1000000", "10^6"),
    ("1500", "1.5 \\times 10^{3}"),
    ("1500", "1.5e3"),
    ("-7", "-7"),
    ("025", "25"),
    # fractions, mixed numbers, decimals of fractions
    ("\\frac{1}{2}", "0.5"),
    ("\\frac{1}{2}", "\\dfrac{1}{2}"),
    ("\\frac{1}{2}", "1/2"),
    ("\\frac{7}{2}", "3\\frac{1}{2}"),
    ("\\frac{7}{2}", "3.5"),
    ("-\\frac{3}{4}", "\\frac{-3}{4}"),
    # percent, money, degrees, units in text
    ("50", "50\\%"),
    ("50\\%", "50"),
    ("18", "\\$18"),
    ("18", "18 dollars"),
    ("90^\\circ", "90"),
    ("90", "90^{\\circ}"),
    ("15\\mbox{ cm}^2", "15"),
    ("5", "5 \\text{ cm}"),
    # radicals, pi, expressions
    ("3\\sqrt{13}", "\\sqrt{117}"),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}"),
    ("\\pi", "\\pi"),
    ("2\\pi", "\\pi \\cdot 2"),
    ("11\\sqrt2", "11\\sqrt{2}"),
    ("x^2+2x+1", "(x+1)^2"),
    ("p - q", "-q + p"),
    # intervals, sets, tuples, lists
    ("[2,5)", "[2, 5)"),
    ("(-\\infty, 0]", "(-\\infty,0]"),
    ("(0,9) \\cup (9,36)", "(0, 9) \\cup (9, 36)"),
    ("\\{1,2\\}", "\\{2,1\\}"),
    ("1,-2", "-2, 1"),
    ("(3, \\frac{\\pi}{2})", "\\left( 3, \\frac{\\pi}{2} \\right)"),
    ("(8,-2)", "(8, -2)"),
    # matrices and vectors
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    (
        "\\begin{pmatrix} -1/3 \\\\ 2/3 \\end{pmatrix}",
        "\\begin{pmatrix} -\\frac{1}{3} \\\\ \\frac{2}{3} \\end{pmatrix}",
    ),
    # equations, inequalities
    ("5", "x = 5"),
    ("x=5", "5"),
    ("y = 2x + 3", "y = 3 + 2x"),
    ("x \\in [-2,7]", "[-2,7]"),
    # complex numbers
    ("6 - 5i", "6-5i"),
    ("-2 + 7i", "7i - 2"),
    # text answers, letters, bases
    ("\\text{Evelyn}", "Evelyn"),
    ("\\text{Evelyn}", "\\text{evelyn}"),
    ("B", "\\text{(B)}"),
    ("(C)", "C"),
    ("52_8", "52_8"),
    ("52_8", "52"),
    ("4210_{5}", "4210_5"),
]

DIFFERENT = [
    ("1591", "1592"),
    ("1591", "-1591"),
    ("1591", "159"),
    ("\\pi", "3.14"),
    ("\\pi", "3.1416"),
    ("\\frac{1}{3}", "0.33"),
    ("\\frac{1}{3}", "0.3333333"),  # face value; rel_tol opts in to rounding
    ("0.5", "50\\%"),  # percent is a unit: 50% is 50, never also 0.5
    ("\\frac{1}{2}", "\\frac{1}{3}"),
    ("[2,5)", "(2,5]"),
    ("[2,5)", "[2,5]"),
    ("(-\\infty, 0]", "(-\\infty, 0)"),
    ("\\{1,2\\}", "\\{1,3\\}"),
    ("(1,2)", "(2,1)"),
    ("1,-2", "1, 2"),
    ("1,-2", "1"),
    ("5", "5, 6"),
    ("5", "\\{5, 6\\}"),
    ("3", "\\pm 3"),
    ("1591", "1591 \\text{ or } 1592"),
    ("x^2+2x+1", "(x-1)^2"),
    ("3R^2", "3R^3"),
    ("6 - 5i", "6 + 5i"),
    ("\\text{Evelyn}", "Devon"),
    ("B", "C"),
    ("B", "A, B, C, D"),
    ("52_8", "52_9"),
    ("52_8", "42"),
    ("y = 2x + 3", "y = 2x + 4"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}"),
    ("50", "5 or more"),
]


def boxed(answer: str) -> str:
    return f"Some working.\n\nThe final answer is $\\boxed{{{answer}}}$."


@pytest.mark.parametrize(("reference", "answer"), SAME)
def test_equivalent_answers_pass(reference: str, answer: str) -> None:
    verdict = check_inline(boxed(answer), reference=reference)
    assert verdict.passed, verdict
    assert verdict.status == "correct"
    assert verdict.extracted == answer


@pytest.mark.parametrize(("reference", "answer"), DIFFERENT)
def test_different_answers_fail(reference: str, answer: str) -> None:
    verdict = check_inline(boxed(answer), reference=reference)
    assert not verdict.passed, verdict
    assert verdict.status in ("incorrect", "unparseable")


def test_relative_tolerance_is_configurable() -> None:
    response = boxed("3.1416")
    assert not check_inline(response, reference="3.14159265").passed
    assert check_inline(response, reference="3.14159265", options=MathOptions(rel_tol=1e-4)).passed
    assert not check_inline(boxed("0.34"), reference="\\frac{1}{3}", options=MathOptions(rel_tol=0.01)).passed


def test_reference_may_be_a_number() -> None:
    assert check_inline(boxed("27"), reference=27.0).passed
    assert check_inline(boxed("2.5"), reference=2.5).passed
    assert check_inline(boxed("7"), reference=7).passed
    assert check_inline("#### 3", reference="3").passed


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,234", 1234),
        ("\\$1,234.50", 1234.5),
        ("-\\frac{3}{4}", -0.75),
        ("2 1/2", 2.5),
        ("x = 5", 5),
        ("\\textbf{(113) }", 113),
        ("1.5e3", 1500),
        ("50\\%", 50),
    ],
)
def test_read_number(text: str, value: float) -> None:
    number = read_number(clean_answer(text))
    assert number is not None and float(number.value) == value


@pytest.mark.parametrize(
    "text", ["1591 or 1592", "5 or more", "1,2", "\\pi", "x=5=6", "3R^2", "", "37\\cdot 43"]
)
def test_read_number_refuses_non_literals(text: str) -> None:
    assert read_number(clean_answer(text)) is None


def test_letters_and_words() -> None:
    assert read_letter("\\text{(B)}") == "B"
    assert read_letter("(c)") == "C"
    assert read_letter("AB") is None
    assert read_text("\\text{North Pole}") == "northpole"
    assert read_text("x+1") is None


def test_clean_answer_drops_presentation() -> None:
    assert clean_answer("\\left( 3, \\dfrac{\\pi}{2} \\right).") == "( 3, \\frac{\\pi}{2} )"
    assert clean_answer("$42$") == "42"
