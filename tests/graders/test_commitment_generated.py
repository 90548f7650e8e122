"""Generated tests of the commitment policy: a later different answer or a retraction after the
committed one is ambiguous (incorrect) for math, exact and QA alike; a benign remark is not."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from graders.commitment import later_statements
from graders.exact import ExactGrader
from graders.math import check_inline
from graders.qa import check as qa_check

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strategies import GENERATED, benign_tail, change_of_mind, retraction  # noqa: E402

_EXACT_COMMITS = st.sampled_from(["\\boxed{{{v}}}", "#### {v}", "Answer: {v}"])
_NUMBERS = st.integers(min_value=-999, max_value=99_999)
_COMMITS = st.sampled_from(["\\boxed{{{v}}}", "#### {v}", "Final Answer: {v}", "The answer is {v}."])
_CITIES = st.sampled_from(["Paris", "London", "Madrid", "Lisbon", "Vienna", "Ottawa", "Nairobi"])


def _other(n: int, delta: int) -> int:
    return n + delta if delta else n + 1


@GENERATED
@given(_NUMBERS, st.integers(-5, 5), _COMMITS, st.data())
def test_math_a_later_different_number_is_ambiguous(
    n: int, delta: int, commit: str, data: st.DataObject
) -> None:
    later = data.draw(change_of_mind(str(_other(n, delta))))
    response = f"We add the parts.\n\n{commit.format(v=n)}\n\n{later}"
    verdict = check_inline(response, reference=str(n))
    assert not verdict.passed, (response, verdict)


@GENERATED
@given(_NUMBERS, _COMMITS, st.data())
def test_math_a_retraction_after_the_answer_is_ambiguous(n: int, commit: str, data: st.DataObject) -> None:
    response = f"{commit.format(v=n)}\n\n{data.draw(retraction())}"
    assert not check_inline(response, reference=str(n)).passed, response


@GENERATED
@given(_NUMBERS, _COMMITS, benign_tail(), st.data())
def test_math_the_same_value_or_a_remark_after_the_answer_keeps_it(
    n: int, commit: str, tail: str, data: st.DataObject
) -> None:
    again = data.draw(st.sampled_from(["", f"\n\n{data.draw(change_of_mind(str(n)))}"]))
    response = f"{commit.format(v=n)}{again}{tail}"
    assert check_inline(response, reference=str(n)).passed, response


@GENERATED
@given(st.integers(1, 50), st.integers(1, 50), st.integers(51, 99), st.data())
def test_math_boxes_for_every_solution_then_another_final_answer_fail(
    a: int, b: int, other: int, data: st.DataObject
) -> None:
    boxes = f"So $x = \\boxed{{{a}}}$ or $x = \\boxed{{{-b}}}$."
    later = data.draw(
        st.one_of(
            st.sampled_from([f"Final Answer: {other}", f"#### {other}", f"Wait, the answer is {other}."]),
            change_of_mind(str(other)),
        )
    )
    reference = f"{a}, {-b}"
    assert check_inline(boxes, reference=reference).passed
    assert not check_inline(f"{boxes}\n\n{later}", reference=reference).passed, later


@GENERATED
@given(_NUMBERS, st.integers(-5, 5), _EXACT_COMMITS, st.data())
def test_exact_a_later_different_number_is_ambiguous(
    n: int, delta: int, commit: str, data: st.DataObject
) -> None:
    later = data.draw(st.one_of(change_of_mind(str(_other(n, delta))), retraction()))
    grade = ExactGrader().verdict(f"{commit.format(v=n)}\n{later}", n)
    assert not grade.passed
    assert grade.reason.startswith("ambiguous"), grade.reason


@GENERATED
@given(_CITIES, _CITIES, st.data())
def test_qa_a_later_different_answer_is_ambiguous(gold: str, other: str, data: st.DataObject) -> None:
    changes = st.one_of(change_of_mind(other), retraction()) if other != gold else retraction()
    later = data.draw(changes)
    response = f"Answer: {gold}\n{later}"
    verdict = qa_check(response, answers=[gold])
    assert not verdict.passed, response
    assert verdict.reason.startswith("ambiguous"), verdict.reason


@GENERATED
@given(_CITIES, benign_tail())
def test_qa_a_remark_after_the_answer_keeps_it(gold: str, tail: str) -> None:
    assert qa_check(f"Answer: {gold}{tail}", answers=[gold]).passed


@GENERATED
@given(st.text(max_size=300))
def test_later_statements_never_raise_and_give_short_values(text: str) -> None:
    for statement in later_statements(text):
        assert statement.value is None or len(statement.value) <= 120
