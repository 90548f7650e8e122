"""A regression table of realistic model outputs with human labels.

Each row is written the way models actually answer (chain of thought, markdown, units, LaTeX
habits) and labelled by hand: does the response give the reference answer? The grader must agree
with every label. ``bench/fidelity_math.py --regression`` also scores Math-Verify on this table.
"""

from __future__ import annotations

import pytest

from graders.math import check_inline

# (model response, reference answer, human label)
CASES: list[tuple[str, str, bool]] = [
    (
        "Janet has 16 - 3 - 4 = 9 eggs left. 9 * $2 = $18.\n\n**Final Answer**\n\\[\n\\boxed{18}\n\\]",
        "18",
        True,
    ),
    ("She makes 9 * 2 = 18 dollars.\n\nThe answer is: 18", "18", True),
    ("So she earns $\\boxed{\\$18.00}$ per day.", "18", True),
    ("Total: $\\boxed{18 \\text{ dollars}}$", "18", True),
    ("The robe needs 2 + 1 = 3 bolts.\n#### 3", "3", True),
    ("It takes 2 + 2/2 = 3 bolts in total, so the answer is 3.", "3", True),
    ("Hence the total is \\(\\boxed{1{,}080}\\).", "1080", True),
    ("The profit is $70,000.\n\nFinal answer: 70000", "70000", True),
    ("She sells 9 eggs, making $\\boxed{\\$9}$... wait, 9 eggs at $2 each is $\\boxed{18}$.", "18", False),
    ("Carla downloads 40% then restarts: \\boxed{160} minutes.", "160", True),
    ("The answer is 160 minutes or 180 minutes depending on the restart.", "160", False),
    ("I think the answer is around 20.", "18", False),
    ("Therefore, the value is $\\boxed{\\frac{14}{3}}$.", "\\frac{14}{3}", True),
    ("Therefore, the value is $\\boxed{4\\frac{2}{3}}$.", "\\frac{14}{3}", True),
    ("Therefore, the value is $\\boxed{4.67}$.", "\\frac{14}{3}", False),
    (
        "Converting, $(r,\\theta) = \\boxed{\\left(3, \\frac{\\pi}{2}\\right)}$.",
        "\\left( 3, \\frac{\\pi}{2} \\right)",
        True,
    ),
    ("So the polar coordinates are $\\boxed{(3, 90^\\circ)}$.", "\\left( 3, \\frac{\\pi}{2} \\right)", False),
    ("The distance is $\\boxed{3\\sqrt{13}}$.", "3\\sqrt{13}", True),
    ("The distance is $\\boxed{\\sqrt{117}}$.", "3\\sqrt{13}", True),
    ("The distance is approximately $\\boxed{10.82}$.", "3\\sqrt{13}", False),
    ("The solutions are $x = 1$ and $x = -2$, so $\\boxed{1, -2}$.", "1,-2", True),
    ("The solutions are $\\boxed{-2, 1}$.", "1,-2", True),
    ("The only solution is $\\boxed{1}$.", "1,-2", False),
    ("Thus $x \\in \\boxed{[-2, 7]}$.", "x \\in [-2,7]", True),
    ("Thus $x \\in \\boxed{(-2, 7)}$.", "x \\in [-2,7]", False),
    ("The domain is $\\boxed{(-\\infty, 2) \\cup (3, \\infty)}$.", "(-\\infty, 2) \\cup (3, \\infty)", True),
    ("The domain is $\\boxed{(-\\infty, 2] \\cup [3, \\infty)}$.", "(-\\infty, 2) \\cup (3, \\infty)", False),
    ("The product is $\\boxed{6 - 5i}$.", "6 - 5i", True),
    ("The product is $\\boxed{6 + 5i}$.", "6 - 5i", False),
    ("The correct choice is $\\boxed{\\text{(C)}}$.", "\\text{(C)}", True),
    ("The correct choice is $\\boxed{C}$.", "\\text{(C)}", True),
    ("The correct choice is $\\boxed{D}$.", "\\text{(C)}", False),
    ("Evelyn has the greatest average speed: $\\boxed{\\text{Evelyn}}$.", "\\text{Evelyn}", True),
    ("So the answer is \\boxed{Evelyn}.", "\\text{Evelyn}", True),
    ("So the answer is \\boxed{Devon}.", "\\text{Evelyn}", False),
    ("In base 8 this is $\\boxed{52_8}$.", "52_8", True),
    ("In base 8 this is $\\boxed{42}$.", "52_8", False),
    ("The equation of the plane is $\\boxed{5x - 7y + 11z + 4 = 0}$.", "5x - 7y + 11z + 4 = 0", True),
    ("The equation of the plane is $\\boxed{-5x + 7y - 11z - 4 = 0}$.", "5x - 7y + 11z + 4 = 0", True),
    ("The equation of the plane is $\\boxed{5x - 7y + 11z = 0}$.", "5x - 7y + 11z + 4 = 0", False),
    ("The line is $\\boxed{y = 2x + 3}$.", "y = 2x + 3", True),
    (
        "The vector is $\\boxed{\\begin{pmatrix} 16/49 \\\\ 48/49 \\\\ 24/49 \\end{pmatrix}}$.",
        "\\begin{pmatrix} 16/49 \\\\ 48/49 \\\\ 24/49 \\end{pmatrix}",
        True,
    ),
    (
        "The vector is $\\boxed{\\begin{pmatrix} 16/49 \\\\ 24/49 \\\\ 48/49 \\end{pmatrix}}$.",
        "\\begin{pmatrix} 16/49 \\\\ 48/49 \\\\ 24/49 \\end{pmatrix}",
        False,
    ),
    ("We get $k = \\boxed{\\frac{1}{2}}$.", "0.5", True),
    ("The angle is $\\boxed{90^\\circ}$.", "90^\\circ", True),
    ("The angle is $\\boxed{\\frac{\\pi}{2}}$ radians.", "90", False),
    ("The probability is $\\boxed{\\frac{3}{56}}$.", "\\frac{3}{56}", True),
    ("The probability is $\\boxed{\\frac{6}{112}}$.", "\\frac{3}{56}", True),
    ("The probability is $\\boxed{\\frac{3}{65}}$.", "\\frac{3}{56}", False),
    ("The answer is $\\boxed{p - q}$.", "p - q", True),
    ("The answer is $\\boxed{q - p}$.", "p - q", False),
    ("Adding up, we get $115+256=\\boxed{371}$.", "371", True),
    ("The answer is $\\boxed{\\textbf{(113) }}$.", "113", True),
    ("The answer is $\\boxed{025}$.", "025", True),
    ("The answer is $\\boxed{25}$.", "025", True),
    ("The answer is $\\boxed{52}$.", "025", False),
    ("\\boxed{5}", "5", True),
    ("Let me reconsider.\n\n\\boxed{5}\n\nActually no: \\boxed{6}", "5", False),
    ("The final answer is $\\boxed{5}$. I hope it is correct.", "5", True),
    ("Answer: $\\frac{\\sqrt{3}}{2}$", "\\frac{\\sqrt{3}}{2}", True),
    ("Answer: $\\frac{\\sqrt{2}}{2}$", "\\frac{\\sqrt{3}}{2}", False),
]


@pytest.mark.parametrize(("response", "reference", "label"), CASES)
def test_agrees_with_human_label(response: str, reference: str, label: bool) -> None:
    verdict = check_inline(response, reference=reference)
    assert verdict.passed is label, verdict


def test_table_is_balanced() -> None:
    positives = sum(label for _, _, label in CASES)
    assert 0.35 < positives / len(CASES) < 0.75
