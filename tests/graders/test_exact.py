"""graders.exact: every answer form counts, and all of them must agree."""

from __future__ import annotations

import pytest

from graders.exact import ExactGrader, extract_committed, normalize_integer

INTEGER = ExactGrader(kind="integer")
TEXT = ExactGrader(kind="text")
LETTER = ExactGrader(kind="text", case_sensitive=False, statements=True)


@pytest.mark.parametrize(
    "response",
    [
        "7",
        "7.",
        "Answer: 7",
        "**Answer:** 7",
        "Answer:\n7",
        "Final answer: 7",
        "The answer is 7.",
        "The final answer is 7.",
        "A: 7",
        "#### 7",
        "\\boxed{7}",
        "\\boxed{\\boxed{7}}",
        "\\fbox{7}",
        "3 + 4 = 7",
        "x = 7",
        "3 + 4 = 7\nAnswer: 7",
        "Answer: 7\n\n3 + 4 = 7",
        "We add.\n\\boxed{7}\nAnswer: 7",
        "#### 7\nAnswer: 7\n\\boxed{7}",
        "Answer: 07",
    ],
)
def test_integer_gold_forms_pass(response: str) -> None:
    grade = INTEGER.verdict(response, 7)
    assert grade.passed, grade.reason


CROSS_FORM_HEDGES = [
    "Answer: 8\n\\boxed{7}",
    "\\boxed{7}\nAnswer: 8",
    "Answer: 7\n6 + 2 = 8",
    "The answer is 8.\n\\boxed{7}",
    "#### 8\nAnswer: 7",
    "#### 7\n\\boxed{8}",
    "\\fbox{8}\nAnswer: 7",
    "A: 8\nFinal answer: 7",
    "Answer: 7\nThe answer is 8",
    "\\boxed{7}\n3 + 5 = 8",
    "Answer: 7\n\\boxed{7}\n#### 8",
]


@pytest.mark.parametrize("response", CROSS_FORM_HEDGES)
def test_cross_form_hedges_fail_whichever_answer_is_right(response: str) -> None:
    for reference in (7, 8):
        grade = INTEGER.verdict(response, reference)
        assert not grade.passed and grade.status == "incorrect", (response, reference)
        assert "different answers" in grade.reason


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("", "no committed answer"),
        ("   \n ", "no committed answer"),
        ("Answer:", "not a literal"),
        ("\\boxed{}", "not a literal"),
        ("Answer: 3 + 4", "not a literal"),
        ("7 or 8", "not a literal"),
        ("Answers vary: 7", "not a literal"),
        ("\\boxed{7", "unclosed box"),
        ("\\boxed{7\nAnswer: 7", "unclosed box"),
        ("\\boxed{7}" * 17, "too many boxes"),
        ("\\boxed{7} \\boxed{8}", "different answers"),
        ("Answer: 7\nAnswer: 8", "different answers"),
        ("7" * 30_000, "longer than"),
        ("We add them.\nThe result follows.", "no committed answer"),
    ],
)
def test_malformed_and_hedged_responses_fail_with_a_reason(response: str, reason: str) -> None:
    grade = INTEGER.verdict(response, 7)
    assert not grade.passed and grade.status == "incorrect"
    assert reason in grade.reason, grade.reason


def test_equal_answers_in_several_forms_agree_after_normalisation() -> None:
    assert INTEGER.verdict("Answer: 1,234\n\\boxed{1234}", 1234).passed
    assert INTEGER.verdict("Answer: -0\n\\boxed{0}", 0).passed
    grade = INTEGER.verdict("Answer: 8", 7)
    assert not grade.passed and grade.extracted == "8" and "expected 7" in grade.reason


def test_text_answers_case_and_cross_form() -> None:
    assert TEXT.verdict("Answer: KALO", "KALO").passed
    assert TEXT.verdict("\\boxed{\\text{KALO}}", "KALO").passed
    assert not TEXT.verdict("Answer: kalo", "KALO").passed
    assert not TEXT.verdict("Answer: KALO\n\\boxed{kalo}", "KALO").passed
    assert (
        ExactGrader(kind="text", case_sensitive=False).verdict("Answer: KALO\n\\boxed{kalo}", "KALO").passed
    )


def test_final_statements_are_opt_in_and_must_agree() -> None:
    sentence = 'The first letter of the word "kalo" is "K".'
    assert not TEXT.verdict(sentence, "k").passed  # not a form by default
    assert LETTER.verdict(sentence, "k").passed
    assert LETTER.verdict("The last letter of 'kalo' is 'o'.", "o").passed
    assert not LETTER.verdict("Answer: k\nThe first letter is 'l'.", "k").passed
    assert not LETTER.verdict("Answer: l\nThe first letter is 'k'.", "k").passed
    assert not LETTER.verdict("It is 'k' or 'l'.", "k").passed


def test_reference_that_is_not_an_integer_is_a_grader_error() -> None:
    assert INTEGER.verdict("7", "seven").status == "error"


def test_extract_committed_lists_every_form() -> None:
    found = extract_committed("#### 7\nAnswer: 7\n\\boxed{7}\n3 + 4 = 7", kind="integer").found
    assert [c.form for c in found] == ["boxed", "#### line", "answer line", "final equation"]
    assert extract_committed("", kind="text").found == ()
    assert normalize_integer("1,234") == "1234" and normalize_integer("3+4") is None
