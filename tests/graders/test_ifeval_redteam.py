"""graders.ifeval red team: hostile 200 kB inputs must neither raise nor cost more than linear CPU time."""

from __future__ import annotations

import functools
import random
import string
from typing import Any

import pytest

from graders.ifeval import CHECKERS, _text
from graders.ifeval.checkers import json_format
from tests.cpu import assert_linear

N = 200_000

KWARGS: dict[str, dict[str, Any]] = {
    "change_case:capital_word_frequency": {"capital_relation": "less than", "capital_frequency": 20},
    "combination:repeat_prompt": {"prompt_to_repeat": "Write"},
    "detectable_content:number_placeholders": {"num_placeholders": 2},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:multiple_sections": {"section_spliter": "SECTION", "num_sections": 2},
    "detectable_format:number_bullet_lists": {"num_bullets": 2},
    "detectable_format:number_highlighted_sections": {"num_highlights": 2},
    "keywords:existence": {"keywords": ["cat"]},
    "keywords:forbidden_words": {"forbidden_words": ["cat", "dog"]},
    "keywords:frequency": {"keyword": "cat", "relation": "at least", "frequency": 2},
    "keywords:letter_frequency": {"letter": "a", "let_relation": "at least", "let_frequency": 2},
    "language:response_language": {"language": "en"},
    "length_constraints:nth_paragraph_first_word": {
        "num_paragraphs": 2,
        "nth_paragraph": 1,
        "first_word": "a",
    },
    "length_constraints:number_paragraphs": {"num_paragraphs": 2},
    "length_constraints:number_sentences": {"relation": "less than", "num_sentences": 61},
    "length_constraints:number_words": {"relation": "at least", "num_words": 2},
    "startend:end_checker": {"end_phrase": "bye"},
}


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=4))


def _hostile() -> dict[str, str]:
    rng = random.Random(0)
    prose = (
        "The quick brown fox jumps over the lazy dog. "
        "Dr. Smith went to Washington, D.C. on Jan. 5th! Really? "
    )
    return {
        "prose": prose * (N // len(prose)),
        "Mr.": "Mr. " * (N // 4),
        "a.": "a. " * (N // 3),
        "ellipsis": "Word... " * (N // 8),
        "nested json": "[" * N,
        "nested objects": '{"a":' * (N // 5),
        "caps words": " ".join(
            rng.choice(["The", "cat", "Dr.", "U.S.", "e.g.", "...", "?!", "don't", '"', "(", ")"])
            for _ in range(N // 5)
        ),
        "unique words": " ".join(_word(rng) + "." for _ in range(N // 6)),
        "unique Mr.": " ".join(f"Mr. {_word(rng)}" for _ in range(N // 9)),
        "unique sentences": " ".join(f"{_word(rng).capitalize()} {_word(rng)}." for _ in range(N // 11)),
        "unique shouts": " ".join(f"{_word(rng).upper()} {_word(rng)}." for _ in range(N // 11)),
        "unique I": " ".join(f"I {_word(rng)}." for _ in range(N // 9)),
    }


def test_deeply_nested_json_is_not_json_and_does_not_raise() -> None:
    assert json_format("[" * 100_000, {}, "") is False
    assert json_format('{"a":' * 50_000, {}, "") is False
    assert json_format("[" * 50 + "]" * 50, {}, "") is True


def _cold() -> None:
    """Forget remembered sentences and decisions (time the work, not the last checker's cache),
    keeping the imports and the tokenizers warm (loading NLTK is not per response)."""
    _text.word_tokenize("Warm up. Done.")
    _text.clear_caches()
    _text.detect_language("warm up")


def _check(checker: Any, kwargs: dict[str, Any], text: str) -> object:
    return checker(text, kwargs, "prompt")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_hostile()))
def test_every_checker_is_linear_on_200_kb(name: str) -> None:
    text = _hostile()[name][:N]
    for instruction_id, checker in CHECKERS.items():
        run = functools.partial(_check, checker, KWARGS.get(instruction_id, {}))
        assert_linear(run, text[: N // 10], text, what=f"{instruction_id} on {name}", before=_cold)


def test_capital_word_count_stops_at_its_threshold_with_the_same_verdicts() -> None:
    rng = random.Random(1)
    # upper case next to lower case, split contractions, non-letter capitals, combining marks
    pieces = [
        *("THE", "cat", "Dr.", "U.S.", "A", "I", "don't", "DON'T", "DOn't", "CANNOT", "caNNOT", "CAnnot"),
        *("GONna", "\u24b6", "\U0001d400", "\u216b", "E\u0301", "\u00c9t\u00e9", "'TIS", "'Tis", "MORE'n"),
        *("D'ye", "\u01c5", "\u00df", "\u0391\u0392", "\u03a3\u03c3", '"HI"', "(OK)", "x-RAY", "X-ray"),
        *("e.g.", ". ", "? ", "\n", "\u2019T", "I\u2019m", "I'm", "WHATcha", "whaddYA", "A1b", "aB"),
    ]
    for _ in range(3000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        full = sum(1 for token in _text.word_tokenize(text) if token.isupper())
        for limit in (1, 3, 1000):
            capped = _text.count_capital_words(text, limit=limit)
            assert (capped < limit) == (full < limit), (text, limit, full, capped)
            assert capped == full or capped >= limit, (text, limit, full, capped)


# -- the hardened option -------------------------------------------------------------
def _follows(response: str, instruction_id: str, kwargs: dict[str, Any], *, hardened: bool) -> bool:
    from graders.ifeval import check

    verdict = check(
        response, instruction_id_list=[instruction_id], kwargs=[kwargs], prompt="p", hardened=hardened
    )
    return verdict.strict[0]


EVASIONS = [
    ("keywords:forbidden_words", {"forbidden_words": ["password"]}, "my pass\u200bword is here"),
    ("keywords:forbidden_words", {"forbidden_words": ["password"]}, "my p\u0430ssword is here"),  # Cyrillic a
    ("keywords:forbidden_words", {"forbidden_words": ["password"]}, "my \uff50\uff41\uff53\uff53word"),
    ("punctuation:no_comma", {}, "one\uff0c two"),  # full-width comma
    ("punctuation:no_comma", {}, "one\u201a two"),  # single low-9 quotation mark
    ("punctuation:no_comma", {}, "one\u060c two"),  # Arabic comma
    # small capitals look like capitals but are lower-case letters: str.islower() passes them
    ("change_case:english_lowercase", {}, "\u1d1bhis is all lower case english text, is it not"),
    ("change_case:english_lowercase", {}, "this is \u1d00\u029f\u029f lower case english text, is it not"),
    ("keywords:existence", {"keywords": ["deadline"]}, "nothing here <!-- deadline -->"),
]


@pytest.mark.parametrize(("instruction_id", "kwargs", "response"), EVASIONS)
def test_hardened_mode_sees_through_typography(
    instruction_id: str, kwargs: dict[str, Any], response: str
) -> None:
    """Reference-exact mode keeps the reference's verdict (the evasion works there, as in the
    reference implementation); hardened mode reads what a reader sees and refuses it."""
    assert _follows(response, instruction_id, kwargs, hardened=False)
    assert not _follows(response, instruction_id, kwargs, hardened=True)


HONEST = [
    ("keywords:forbidden_words", {"forbidden_words": ["password"]}, "nothing to see, caf\u00e9 na\u00efve"),
    ("punctuation:no_comma", {}, "no commas here \u2014 just dashes and \u201cquotes\u201d"),
    ("change_case:english_lowercase", {}, "this is all lower case english text and it is fine"),
    ("keywords:existence", {"keywords": ["don't"]}, "I don\u2019t think so"),
    (
        "language:response_language",
        {"language": "ru"},
        "\u042d\u0442\u043e \u043f\u0440\u043e\u0441\u0442\u043e\u0439 \u0442\u0435\u043a\u0441\u0442 "
        "\u043d\u0430 \u0440\u0443\u0441\u0441\u043a\u043e\u043c \u044f\u0437\u044b\u043a\u0435, "
        "\u043e\u043d \u043e\u0447\u0435\u043d\u044c \u0445\u043e\u0440\u043e\u0448\u0438\u0439.",
    ),
]


@pytest.mark.parametrize(("instruction_id", "kwargs", "response"), HONEST)
def test_hardened_mode_keeps_honest_text(instruction_id: str, kwargs: dict[str, Any], response: str) -> None:
    assert _follows(response, instruction_id, kwargs, hardened=True)
