"""Every bundled grader answers every response with a verdict.

Hypothesis drives the exact, math, QA, IFEval and rubric graders with generated Unicode, markup
and numeric text (digits of other scripts, superscripts, circled and full-width digits, entities,
boxes, answer lines, huge and odd numbers) and asserts a :class:`Grade` with a verdict status
every time: never an exception, never ``error``/``timeout``, and never ``grader_failed`` (a
grader that raised: the wrapper keeps the response from paying, this test makes the bug fail CI).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.exact import ExactGrader
from graders.grade import Grade
from graders.ifeval import IFEvalGrader
from graders.math import MathGrader
from graders.pool import WorkerPool
from graders.protocol import Grader
from graders.qa import QAGrader
from graders.rubric import load_rubric

# pieces that grader code reads specially: digits int()/float() treat differently, number forms,
# answer markers, LaTeX, Markdown and HTML markup, sentence shapes
FRAGMENTS = [
    *"0123456789",
    *"\u00b2\u00b3\u00b9\u2070\u2074\u2460\u2469\u2780\u0663\u06f5\u0967\u0e53\uff13\u1369\u19da\u2155\u00bd",
    "\U00010a40",
    "\U0001d7ce",
    "1,000",
    "1\\,000",
    "1e999",
    "-0",
    "0x1F",
    "NaN",
    "\u221e",
    "\u221a2",
    "\u2212",
    "1st",
    "22nd",
    "9th",
    "th",
    "rd",
    "season ",
    "chapter ",
    "4/",
    "/1990",
    "/",
    ".",
    ",",
    " ",
    "\n",
    "\\boxed{",
    "\\fbox{",
    "}",
    "{",
    "$",
    "$$",
    "\\(",
    "\\)",
    "\\frac{",
    "^{",
    "_{",
    "!",
    "\\sqrt",
    "\\tan(",
    ")",
    "(",
    "\\pm",
    "\\text{",
    "Answer: ",
    "**Answer**: ",
    "#### ",
    "The answer is ",
    "Final Answer: ",
    "<think>",
    "</think>",
    "**",
    "_",
    "`",
    "```",
    "<!--",
    "-->",
    "<b>",
    "</b>",
    "&#97;",
    "&#44;",
    "&amp;",
    "[x]: ",
    "Mr. ",
    "A. ",
    "P.S. ",
    "SECTION 1",
    "\u200b",
    "\ufeff",
    "\u0430",
    "Paris",
    "March",
    "1990",
    "twenty one",
    "\\u00e9",
    "\u00c3\u00a9",
]

TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=24).map("".join),
)
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

IFEVAL_REFERENCE = {
    "prompt": "Write a short startup pitch.",
    "instruction_id_list": [
        "punctuation:no_comma",
        "keywords:forbidden_words",
        "length_constraints:number_sentences",
        "change_case:capital_word_frequency",
        "detectable_format:number_bullet_lists",
        "detectable_content:postscript",
        "keywords:existence",
    ],
    "kwargs": [
        {},
        {"forbidden_words": ["cat"]},
        {"relation": "at least", "num_sentences": 3},
        {"capital_relation": "less than", "capital_frequency": 4},
        {"num_bullets": 2},
        {"postscript_marker": "P.S."},
        {"keywords": ["pitch"]},
    ],
}

RUBRIC = {
    "id": "totality",
    "checks": [
        {"id": "keyword", "kind": "contains", "text": ["Paris", "1990"], "mode": "any", "ignore_case": True},
        {"id": "no-cat", "kind": "contains", "text": "cat", "mode": "none"},
        {"id": "short", "kind": "length", "unit": "words", "max": 40},
        {"id": "lines", "kind": "length", "unit": "lines", "min": 1},
        {"id": "exact", "kind": "grader", "grader": "exact", "options": {"kind": "integer"}, "reference": 42},
        {"id": "qa", "kind": "grader", "grader": "qa", "reference": ["Paris"]},
    ],
}


def _assert_verdict(grade: Any, response: str) -> None:
    assert isinstance(grade, Grade), (response, grade)
    assert grade.status in ("correct", "partial", "incorrect"), (response, grade)
    assert not grade.grader_failed, (response, grade)


def _grade(grader: Grader, response: str, reference: Any) -> Grade:
    return asyncio.run(grader(response, reference=reference))


@SETTINGS
@given(response=TEXT)
def test_exact_grader_is_total(response: str) -> None:
    for grader, reference in ((ExactGrader(kind="integer"), 42), (ExactGrader(kind="text"), "Paris")):
        _assert_verdict(_grade(grader, response, reference), response)


@SETTINGS
@given(response=TEXT)
def test_qa_grader_is_total(response: str) -> None:
    grader = QAGrader()
    for reference in (["Paris"], ["1990", "March 3, 1990"], ["21st"], ["A"]):
        _assert_verdict(_grade(grader, response, reference), response)


# every character Python calls a digit (str.isdigit), decimal or not, in number positions
DIGITS = [chr(c) for c in range(0x110000) if chr(c).isdigit()]
NUMBER_SLOTS = [
    "Answer: {d}th",
    "Answer: season {d}",
    "Answer: {d}/4/1990",
    "Answer: 4/{d}/1990",
    "Answer: {d}{d}",
]


def test_qa_grader_reads_every_digit_character() -> None:
    grader = QAGrader()

    async def run() -> list[tuple[str, Grade]]:
        responses = [slot.format(d=d) for d in DIGITS for slot in NUMBER_SLOTS]
        return [(r, await grader(r, reference=["1990", "4th"])) for r in responses]

    assert len(DIGITS) > 500
    for response, grade in asyncio.run(run()):
        _assert_verdict(grade, response)


@settings(SETTINGS, max_examples=50)
@given(response=TEXT)
def test_ifeval_grader_is_total(response: str) -> None:
    for hardened in (False, True):
        _assert_verdict(_grade(IFEvalGrader(hardened=hardened), response, IFEVAL_REFERENCE), response)


@settings(SETTINGS, max_examples=60)
@given(response=TEXT)
def test_rubric_deterministic_checks_are_total(response: str) -> None:
    _assert_verdict(_grade(load_rubric(RUBRIC), response, None), response)


@settings(SETTINGS, max_examples=40)
@given(response=TEXT)
def test_math_grader_is_total(math_pool: WorkerPool, response: str) -> None:
    for reference in ("42", "\\frac{\\sqrt{3}}{2}"):
        grade = _grade(MathGrader(pool=math_pool, timeout=5.0), response, reference)
        _assert_verdict(grade, response)
