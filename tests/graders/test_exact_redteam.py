"""graders.exact red team: responses that passed without committing to the reference, and
hostile inputs that made the grader hang. Each case failed (or hung) before its fix."""

from __future__ import annotations

import time

import pytest

from graders.exact import MAX_RESPONSE_CHARS, ExactGrader

INTEGER = ExactGrader(kind="integer")
INTEGER_STATEMENTS = ExactGrader(kind="integer", statements=True)
LETTER = ExactGrader(kind="text", case_sensitive=False, statements=True)
WORD = ExactGrader(kind="text", statements=True)

# whitespace runs that the answer-line, final-equation and statement patterns used to split in
# every possible way (cubic for "Answer" + whitespace: hours for 20,000 characters)
HOSTILE = [
    "Answer" + " " * (MAX_RESPONSE_CHARS - 10),
    "Answer" + "\n" * (MAX_RESPONSE_CHARS - 10),
    "The answer" + " \n" * (MAX_RESPONSE_CHARS // 2 - 10) + "=",
    "x = 1" + " " * (MAX_RESPONSE_CHARS - 10) + "y",
    "it is" + " " * (MAX_RESPONSE_CHARS - 10) + "x",
]


@pytest.mark.parametrize("response", HOSTILE, ids=range(len(HOSTILE)))
def test_whitespace_runs_are_graded_in_linear_time(response: str) -> None:
    for grader in (INTEGER, INTEGER_STATEMENTS, WORD):
        start = time.perf_counter()
        grade = grader.verdict(response, 1)
        assert not grade.passed
        assert time.perf_counter() - start < 0.5, (grader, response[:12])


@pytest.mark.parametrize(
    "response",
    ["x != 7", "3 + 5 != 7", "x >= 7", "x <= 7", "x += 7", "x -= 7", "x ~= 7", "x *= 7", "x /= 7"],
)
def test_a_final_comparison_is_not_an_equation(response: str) -> None:
    """``3 + 5 != 7`` asserts the opposite of 7; ``x >= 7`` commits to no value."""
    assert not INTEGER.verdict(response, 7).passed


@pytest.mark.parametrize("response", ["x = 7", "3 + 4 = 7", "x := 7", "3 + 4 = 7.", "3 + 4 =7"])
def test_final_equations_still_pass(response: str) -> None:
    assert INTEGER.verdict(response, 7).passed


@pytest.mark.parametrize(
    "response",
    [
        "\\boxed{7}\n8",
        "\\boxed{7}\n\n8.",
        "Answer: 7\n8",
        "#### 7\n8",
        "The answer is:\n7\n8",
        "Answer:\n7\n8",
        "3 + 4 = 7\nAnswer: 7\n8",
    ],
)
def test_a_bare_integer_ending_the_response_is_a_commitment_too(response: str) -> None:
    """A different number alone on the last line takes the answer back (or hedges): it fails
    whichever of the two is right, as extract.py does for the math grader."""
    for reference in (7, 8):
        grade = INTEGER.verdict(response, reference)
        assert not grade.passed, (response, reference)
        assert "different answers" in grade.reason


@pytest.mark.parametrize(
    "response", ["\\boxed{7}\n7", "Answer: 7\n\n7.", "8\n\\boxed{7}", "Answer:\n7", "#### 7\n\n**7**"]
)
def test_a_bare_integer_agreeing_with_the_answer_still_passes(response: str) -> None:
    assert INTEGER.verdict(response, 7).passed


@pytest.mark.parametrize(
    "response",
    [
        "It is 'k' or it is 'l'.",
        "The first letter is 'k', or maybe it is 'l'.",
        "It is 'l' and it is 'k'.",
    ],
)
def test_every_quoted_statement_on_the_last_line_counts(response: str) -> None:
    for reference in ("k", "l"):
        assert not LETTER.verdict(response, reference).passed, (response, reference)


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("The first letter of the word 'kalo' is 'K'.", "k"),
        ("It is not 'l', it is 'k'.", "k"),
        ("Is it 'l'? No, it is 'k'.", "k"),
        ("The first letter is 'K' and in lowercase it is 'k'.", "k"),
        ("The word 'kalo' written backwards is 'olak'.", "olak"),
    ],
)
def test_honest_final_statements_still_pass(response: str, reference: str) -> None:
    grader = LETTER if len(reference) == 1 else WORD
    assert grader.verdict(response, reference).passed


@pytest.mark.parametrize(
    ("response", "grader", "references"),
    [
        ("\\boxed{7} or 8", INTEGER, (7, 8)),
        ("\\boxed 7 or 8", INTEGER, (7, 8)),
        ("$\\boxed{7}$ or $8$", INTEGER, (7, 8)),
        ("8 or \\boxed{7}", INTEGER, (7, 8)),
        ("\\boxed{7}/8", INTEGER, (7, 8)),
        ("The answer is \\boxed{7} (or 8).", INTEGER, (7, 8)),
        ("\\boxed{\\text{KALO}} or OLAK", WORD, ("KALO", "OLAK")),
    ],
)
def test_a_box_offered_as_one_of_alternatives_fails(
    response: str, grader: ExactGrader, references: tuple
) -> None:
    for reference in references:
        assert not grader.verdict(response, reference).passed, (response, reference)


@pytest.mark.parametrize(
    "response",
    [
        "So 3 + 4 = \\boxed{7}.",
        "The final answer is $\\boxed{7}$.",
        "Answer: \\boxed{7}",
        "**Final Answer:** $\\boxed{7}$",
        "**\\boxed{7}**",
        "We add 3 and 4 or, equivalently, count on: \\boxed{7}",
    ],
)
def test_boxes_in_ordinary_sentences_still_pass(response: str) -> None:
    assert INTEGER.verdict(response, 7).passed


# -- alternatives on later lines, typography ------------------------------------------
@pytest.mark.parametrize(
    "response",
    [
        "Answer: 7\nor 8",
        "Answer: 7\n(or 8)",
        "Answer: 7\nAlternatively, 8.",
        "Answer: 7\nMaybe 8 though.",
        "Answer: 7\nOr it could be 8",
        "Answer: 7\n\n8 is also possible",
        "#### 7\nor 8",
        "\\boxed{7}\nor 8",
        "Answer: 7\n**or** 8",
        "Answer: 7\n- or -8",
        "The answer is 7.\nPerhaps 9.",
    ],
)
def test_an_alternative_on_a_later_line_fails(response: str) -> None:
    """The math grader's hedge rule, for alternatives after the answer line (passed before)."""
    assert ExactGrader().verdict(response, 7).status == "incorrect"


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("Answer: \u22127", -7),
        ("Answer: \uff17", 7),
        ("Answer: \uff11\uff12", 12),
        ("#### \u221212", -12),
        ("Answer: 1\u2009234", 1234),
        ("Answer: 7\nThe 3 steps above show it.", 7),
        ("Answer: 7\nThis could be verified by 3 + 4.", 7),
        ("Answer: 7\nor, written in words, 7", 7),
    ],
)
def test_honest_typography_and_remarks_pass(response: str, reference: int) -> None:
    assert ExactGrader().verdict(response, reference).status == "correct"
