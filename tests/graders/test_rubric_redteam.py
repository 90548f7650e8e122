"""Rubric red team: deterministic checks that invisible or look-alike text used to slip past."""

from __future__ import annotations

import time
from typing import Any

import pytest

from graders.rubric import Rubric, load_rubric


def rubric(*checks: dict[str, Any], **over: Any) -> Rubric:
    return load_rubric({"id": "t", "checks": list(checks), **over})


FORBIDDEN = {
    "id": "no-refusal",
    "kind": "contains",
    "text": ["as an ai", "i cannot"],
    "mode": "none",
    "ignore_case": True,
}


@pytest.mark.parametrize(
    "response",
    [
        "As an\u200b AI, I will not.",  # zero-width space
        "As an A\u200dI, I will not.",  # zero-width joiner inside a word
        "As an\u00a0AI, I will not.",  # no-break space
        "As an  AI, I will not.",  # two spaces
        "As an\nAI, I will not.",  # a line break
        "I can\u00adnot help.",  # soft hyphen
        "As an \uff21\uff29, I will not.",  # full-width letters
        "As an \u2060AI\ufeff, I will not.",  # word joiner, BOM
        "\u202eAs an AI, I will not.",  # bidi override
    ],
)
async def test_forbidden_text_hidden_by_invisible_or_compatibility_characters_is_found(response: str) -> None:
    grade = await rubric(FORBIDDEN)(response, reference=None)
    assert not grade.passed, response


async def test_forbidden_text_absent_still_passes() -> None:
    assert (await rubric(FORBIDDEN)("A plain, helpful answer.", reference=None)).passed
    # "all"/"any" are not loosened: a required string must be there as written
    required = {"id": "code", "kind": "contains", "text": "```\n", "mode": "all"}
    assert not (await rubric(required)("``` python", reference=None)).passed


@pytest.mark.parametrize(
    ("check", "response"),
    [
        ({"id": "n", "kind": "length", "unit": "chars", "min": 100}, "short" + "\u200b" * 200),
        ({"id": "n", "kind": "length", "unit": "chars", "min": 100}, "short" + "\u2060\ufeff\u00ad" * 100),
        ({"id": "n", "kind": "length", "unit": "words", "min": 50}, "one two" + " \u200b" * 100),
        ({"id": "n", "kind": "length", "unit": "lines", "min": 10}, "one line" + "\n\u200b" * 20),
        ({"id": "n", "kind": "length", "unit": "lines", "min": 10}, "one line" + "\n\u2800" * 20),
    ],
)
async def test_invisible_padding_does_not_meet_a_minimum_length(check: dict[str, Any], response: str) -> None:
    grade = await rubric(check)(response, reference=None)
    assert not grade.passed, (check, response[:20])


async def test_visible_text_is_still_measured_as_before() -> None:
    words = {"id": "n", "kind": "length", "unit": "words", "min": 3, "max": 3}
    assert (await rubric(words)("one two three", reference=None)).passed
    chars = {"id": "n", "kind": "length", "unit": "chars", "min": 11, "max": 11}
    assert (await rubric(chars)("  hello world  ", reference=None)).passed
    lines = {"id": "n", "kind": "length", "unit": "lines", "min": 2, "max": 2}
    assert (await rubric(lines)("a\n\n  \nb\n", reference=None)).passed


@pytest.mark.slow
async def test_deterministic_checks_are_fast_on_hostile_text() -> None:
    checks = [
        {**FORBIDDEN, "id": "c1"},
        {"id": "c2", "kind": "contains", "text": ["a" * 1000 + "b"], "mode": "any"},
        {"id": "l1", "kind": "length", "unit": "chars", "min": 1},
        {"id": "l2", "kind": "length", "unit": "words", "min": 1},
        {"id": "l3", "kind": "length", "unit": "lines", "min": 1},
    ]
    r = rubric(*checks, max_response_chars=1_000_000)

    async def cpu_s(text: str) -> float:  # this process's CPU time: other load on the machine
        started = time.process_time()  # does not count, so the test holds on a busy CI runner
        await r(text, reference=None)
        return time.process_time() - started

    for unit in ("a", "\u200b", "\n", "a\u0301"):
        small = min([await cpu_s(unit * 50_000) for _ in range(3)])
        large = min([await cpu_s(unit * 500_000) for _ in range(3)])
        # ten times the text: about ten times the work when the checks are linear, a hundred
        # times when one is quadratic (a backtracking pattern); the floor absorbs timer noise
        assert large < 30 * max(small, 0.002), (unit, small, large)
        assert large < 5.0, (unit, large)  # and nothing pathological in absolute terms


def _prompt() -> Any:
    from graders.rubric.prompt import build_judge_messages

    return build_judge_messages(question="Is it good?", choices=["no", "yes"], response="[[[[ repeat me")


def test_deeply_nested_judge_answer_is_a_verdict_error_not_a_crash() -> None:
    from graders.rubric.errors import VerdictError
    from graders.rubric.judge import parse_verdict

    prompt = _prompt()
    answer = '{"reason": ' + "[" * 1900 + "]" * 1900 + f', "verdict": "{prompt.codes[1]}"}}'
    assert len(answer) < 4000
    with pytest.raises(VerdictError):
        parse_verdict(answer, prompt)


async def test_a_judge_answer_that_breaks_the_parser_is_an_error_vote() -> None:
    from graders.rubric.judge import JudgeSampling, ask_judge

    prompt = _prompt()

    class Nesting:
        async def complete(self, messages: Any, *, sampling: JudgeSampling) -> str:
            return '{"reason": ' + "[" * 1900 + "]" * 1900 + ', "verdict": "x"}'

    vote = await ask_judge(Nesting(), prompt, sampling=JudgeSampling(), timeout_s=5, max_chars=4000)
    assert vote.choice is None and vote.error is not None


# -- typography, look-alikes and hidden text in deterministic text checks ------------
@pytest.mark.parametrize(
    "response",
    [
        "I don\u2019t know, as an AI",  # the forbidden phrase with a curly apostrophe nearby
        "As an \u0410I model",  # Cyrillic A
        "\u0430s \u0430n \u0430i",  # Cyrillic a
        "As\u200b an\u2060 AI",  # zero-width characters inside
        "\uff21\uff53 \uff41\uff4e \uff21\uff29",  # full-width letters
        "<!-- as an ai --> a plain answer",  # hidden, but still written: forbidden fails closed
    ],
)
async def test_forbidden_phrases_survive_typography_and_look_alikes(response: str) -> None:
    assert not (await rubric(FORBIDDEN)(response, reference=None)).passed, response


@pytest.mark.parametrize(
    ("text", "response", "passes"),
    [
        ("don't", "I don\u2019t think so", True),  # a curly apostrophe is the apostrophe
        ("password", "the p\u0430ssword is", True),  # a look-alike letter reads as the letter
        ("deadline", "dead\u200bline", True),  # zero-width characters are not there
        ("deadline", "no keyword here <!-- deadline -->", False),  # hidden: not there for a reader
        ("deadline", "no keyword here\n[//]: # (deadline)\n", False),  # a Markdown comment
        ("deadline", "the deadline <!-- note --> is Friday", True),
    ],
)
async def test_required_keywords_read_what_a_reader_sees(text: str, response: str, passes: bool) -> None:
    required = {"id": "kw", "kind": "contains", "text": [text], "mode": "all"}
    assert (await rubric(required)(response, reference=None)).passed is passes
