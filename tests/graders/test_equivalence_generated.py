"""Generated equivalence and mutation tests, per grader family: answer-preserving rewrites of a
gold answer (wrappers, markup, typography, notations, abbreviations, date and number formats)
pass; near misses (off by one, sign, another office, another person, another place, a dropped
letter) fail."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from graders.exact import ExactGrader
from graders.math import check_inline
from graders.qa import check as qa_check
from graders.qa.lexicon import DROPPABLE_HEADS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strategies import GENERATED, integer_forms, markup_wrap  # noqa: E402

_INTS = st.integers(min_value=-99_999, max_value=9_999_999)
_WRAPPERS = st.sampled_from(
    [
        "The answer is \\boxed{{{v}}}.",
        "#### {v}",
        "Answer: {v}",
        "**Answer**: {v}",
        "**Final Answer:** {v}",
        "Final answer: **{v}**",
        "The final answer is:\n```\n{v}\n```",
    ]
)


@GENERATED
@given(_INTS, _WRAPPERS, st.data())
def test_math_integer_rewrites_pass_and_near_misses_fail(n: int, wrapper: str, data: st.DataObject) -> None:
    shown = data.draw(integer_forms(n))
    assert check_inline(wrapper.format(v=shown), reference=str(n)).passed, wrapper.format(v=shown)
    miss = data.draw(st.sampled_from([n + 1, n - 1, -n if n else 7]))
    assert not check_inline(wrapper.format(v=miss), reference=str(n)).passed


@pytest.mark.slow
@GENERATED
@given(st.integers(1, 40), st.integers(1, 40), st.sampled_from(["or", "\\lor", "\\text{ or }", "\\vee"]))
def test_math_an_interval_union_written_with_or_passes(a: int, gap: int, joiner: str) -> None:
    b = a + gap
    reference = f"(-\\infty, {a}) \\cup ({b}, \\infty)"
    assert check_inline(f"\\boxed{{x < {a} {joiner} x > {b}}}", reference=reference).passed
    assert not check_inline(f"\\boxed{{x < {a} {joiner} x > {b + 1}}}", reference=reference).passed
    assert not check_inline(f"\\boxed{{x \\le {a} {joiner} x > {b}}}", reference=reference).passed


@GENERATED
@given(st.integers(2, 99).filter(lambda k: int(k**0.5) ** 2 != k), st.integers(1, 9))
def test_math_unicode_notation_reads_as_latex(k: int, c: int) -> None:
    assert check_inline(f"\\boxed{{{c}\u221a{k}}}", reference=f"{c}\\sqrt{{{k}}}").passed
    assert not check_inline(f"\\boxed{{{c}\u221a{k + 1}}}", reference=f"{c}\\sqrt{{{k}}}").passed
    assert check_inline(f"\\boxed{{{c} + {k}\\mathrm{{i}}}}", reference=f"{c}+{k}i").passed
    assert check_inline(f"\\boxed{{(-\u221e, {k}]}}", reference=f"(-\\infty, {k}]").passed
    assert check_inline(f"\\boxed{{{c}\u00bd}}", reference=f"\\frac{{{2 * c + 1}}}{{2}}").passed


@GENERATED
@given(_INTS, st.data())
def test_exact_integer_rewrites_pass_and_near_misses_fail(n: int, data: st.DataObject) -> None:
    grader = ExactGrader()
    shown = data.draw(integer_forms(n))
    wrapped = data.draw(markup_wrap(shown))
    form = data.draw(st.sampled_from(["Answer: {v}", "#### {v}", "{v}", "\\boxed{{{v}}}"]))
    response = form.format(v=wrapped)
    assert grader.verdict(response, n).passed, response
    assert not grader.verdict(form.format(v=n + 1), n).passed


@GENERATED
@given(
    st.sampled_from(["Paris", "blue whale", "Mount Everest", "oxygen"]),
    st.sampled_from(["\u201c{v}\u201d", "\u2018{v}\u2019", '"{v}"', "{v}"]),
    st.data(),
)
def test_exact_text_answers_under_markup_and_typographic_quotes(
    gold: str, quotes: str, data: st.DataObject
) -> None:
    grader = ExactGrader(kind="text")
    response = "Answer: " + data.draw(markup_wrap(quotes.format(v=gold)))
    assert grader.verdict(response, gold).passed, response
    assert not grader.verdict("Answer: " + data.draw(markup_wrap(gold + "s")), gold).passed


_OFFICES = st.sampled_from(
    ["President of France", "Governor of Texas", "Prime Minister of Canada", "Mayor of Chicago", "Chancellor"]
)
_PREFIXES = st.sampled_from(["Vice", "Lieutenant", "Deputy", "Acting", "Former", "Assistant", "Vice-"])


@GENERATED
@given(_OFFICES, _PREFIXES)
def test_qa_a_title_before_an_office_names_another_office(office: str, prefix: str) -> None:
    joined = f"{prefix}{office}" if prefix.endswith("-") else f"{prefix} {office}"
    assert qa_check(office, answers=[office]).passed
    assert not qa_check(joined, answers=[office]).passed, joined


_PEOPLE = st.sampled_from(["John Adams", "George Bush", "Edward White", "Mary Shelley", "Henry Ford"])


@GENERATED
@given(_PEOPLE, st.lists(st.sampled_from("ABCDEFGHJKLMNPQRSTW"), min_size=1, max_size=2))
def test_qa_added_middle_initials_name_another_person(name: str, initials: list[str]) -> None:
    first, last = name.split()
    middle = " ".join(f"{i}." for i in initials)
    assert not qa_check(f"{first} {middle} {last}", answers=[name]).passed


@GENERATED
@given(st.sampled_from(["Paris", "London", "Chicago", "Toronto", "Jordan", "Georgia", "Madrid"]), st.data())
def test_qa_a_head_noun_after_a_place_names_another_thing(place: str, data: st.DataObject) -> None:
    head = data.draw(st.sampled_from(sorted(DROPPABLE_HEADS)))
    assert not qa_check(f"{place} {head.capitalize()}", answers=[place]).passed


@GENERATED
@given(st.sampled_from(["vitamin A", "Plan A", "Group A", "A", "type A"]), st.data())
def test_qa_the_letter_a_is_part_of_the_answer(gold: str, data: st.DataObject) -> None:
    assert qa_check(data.draw(markup_wrap(gold)), answers=[gold]).passed
    rest = gold[: -len("A")].strip()
    if rest:
        assert not qa_check(rest, answers=[gold]).passed
    assert not qa_check("B" if gold == "A" else f"{rest} B", answers=[gold]).passed


_NUMBER_WORDS = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    11: "eleven",
    13: "thirteen",
    15: "fifteen",
    19: "nineteen",
}
_TENS_WORDS = {20: "twenty", 40: "forty", 60: "sixty", 80: "eighty"}


@GENERATED
@given(
    st.sampled_from(sorted(_NUMBER_WORDS)),
    st.sampled_from(sorted(_TENS_WORDS)),
    st.sampled_from(sorted(_NUMBER_WORDS)),
)
def test_qa_number_words_add_only_in_english_order(teen: int, tens: int, unit: int) -> None:
    assume(unit < 10)
    words = f"{_NUMBER_WORDS[teen].capitalize()} {_TENS_WORDS[tens].capitalize()}-{_NUMBER_WORDS[unit]}"
    assert not qa_check(words, answers=[str(teen + tens + unit)]).passed, words
    assert qa_check(f"{_TENS_WORDS[tens]}-{_NUMBER_WORDS[unit]}", answers=[str(tens + unit)]).passed


_ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII", 9: "IX", 14: "XIV"}


@GENERATED
@given(
    st.sampled_from(["World War", "Henry", "Super Bowl", "Louis", "Apollo"]), st.sampled_from(sorted(_ROMAN))
)
def test_qa_roman_and_arabic_numerals_in_names_agree(name: str, k: int) -> None:
    roman, arabic = f"{name} {_ROMAN[k]}", f"{name} {k}"
    assert qa_check(arabic, answers=[roman]).passed
    assert qa_check(roman, answers=[arabic]).passed
    assert not qa_check(f"{name} {k + 1}", answers=[roman]).passed


@GENERATED
@given(
    st.sampled_from(
        [
            ("United Kingdom", "U.K."),
            ("United States", "U.S."),
            ("United States of America", "U.S.A."),
            ("Saint Louis", "St. Louis"),
            ("Saint Helena", "St. Helena"),
            ("Mount Vernon", "Mt. Vernon"),
        ]
    ),
    st.booleans(),
)
def test_qa_dotted_abbreviations_and_expansions_agree(pair: tuple[str, str], flip: bool) -> None:
    full, short = pair
    gold, said = (short, full) if flip else (full, short)
    assert qa_check(f"**Answer**: {said}", answers=[gold]).passed, (said, gold)


@GENERATED
@given(st.dates(min_value=datetime.date(1800, 1, 1), max_value=datetime.date(2030, 12, 31)), st.data())
def test_qa_dates_in_other_formats_agree_and_a_wrong_day_or_weekday_fails(
    day: datetime.date, data: st.DataObject
) -> None:
    gold = f"{day.strftime('%B')} {day.day}, {day.year}"
    form = data.draw(
        st.sampled_from(
            ["{d}.{m:02d}.{y}", "{d} {B} {y}", "{A}, {B} {d}, {y}", "{A} {d} {B} {y}", "{B} {d}, {y}"]
        )
    )
    fields = {"d": day.day, "m": day.month, "y": day.year, "B": day.strftime("%B"), "A": day.strftime("%A")}
    assert qa_check(form.format(**fields), answers=[gold]).passed, form.format(**fields)
    other = day + datetime.timedelta(days=1)
    moved = dict(fields, d=other.day, m=other.month, y=other.year, B=other.strftime("%B"))
    assert not qa_check(form.format(**moved), answers=[gold]).passed
    wrong_weekday = (day + datetime.timedelta(days=3)).strftime("%A")
    assert not qa_check(f"{wrong_weekday}, {gold}", answers=[gold]).passed


@GENERATED
@given(
    st.integers(1, 999), st.sampled_from([("thousand", 1_000), ("million", 1_000_000), ("billion", 10**9)])
)
def test_qa_a_number_with_a_scale_word_is_its_value(k: int, scale: tuple[str, int]) -> None:
    word, value = scale
    assert qa_check(f"{k} {word}", answers=[f"{k * value:,}"]).passed
    assert not qa_check(f"{k + 1} {word}", answers=[f"{k * value:,}"]).passed
    assert not qa_check(f"{k}", answers=[f"{k * value:,}"]).passed
