"""Every IFEval checker runs in linear time: ten times the text (100 kB to 1 MB) costs about ten
times the CPU time, not a hundred.

Hostile shapes: one megabyte-long "sentence", runs of markup characters, a sentence per
character, capital words without end. Before the fix ``change_case:capital_word_frequency``
tokenised a whole megabyte-long sentence before counting (about 8 s on 200,000 characters for
the reference implementation, over 5 s here on 1 MB); ``english_capital`` ran language
detection on text that is not upper case at all.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from graders.ifeval.checkers import CHECKERS
from tests.cpu import assert_linear

MB = 1_000_000
KWARGS: dict[str, list[dict[str, Any]]] = {
    "change_case:capital_word_frequency": [
        {"capital_relation": "less than", "capital_frequency": 20},
        {"capital_relation": "at least", "capital_frequency": 20},
    ],
    "change_case:english_capital": [{}],
    "change_case:english_lowercase": [{}],
    "combination:repeat_prompt": [{"prompt_to_repeat": "Write a short startup pitch."}],
    "combination:two_responses": [{}],
    "detectable_content:number_placeholders": [{"num_placeholders": 20}],
    "detectable_content:postscript": [{"postscript_marker": "P.P.S"}, {"postscript_marker": "P.S."}],
    "detectable_format:constrained_response": [{}],
    "detectable_format:json_format": [{}],
    "detectable_format:multiple_sections": [{"section_spliter": "SECTION", "num_sections": 4}],
    "detectable_format:number_bullet_lists": [{"num_bullets": 10}],
    "detectable_format:number_highlighted_sections": [{"num_highlights": 10}],
    "detectable_format:title": [{}],
    "keywords:existence": [{"keywords": ["Argentinian", "story"]}],
    "keywords:forbidden_words": [{"forbidden_words": ["nourriture", "word"]}],
    "keywords:frequency": [
        {"relation": "at least", "keyword": "story", "frequency": 10},
        {"relation": "less than", "keyword": "a", "frequency": 10},
    ],
    "keywords:letter_frequency": [{"let_relation": "at least", "letter": "a", "let_frequency": 60}],
    "language:response_language": [{"language": "kn"}],
    "length_constraints:nth_paragraph_first_word": [
        {"first_word": "a", "num_paragraphs": 4, "nth_paragraph": 3}
    ],
    "length_constraints:number_paragraphs": [{"num_paragraphs": 6}],
    "length_constraints:number_sentences": [
        {"relation": "at least", "num_sentences": 31},
        {"relation": "less than", "num_sentences": 31},
    ],
    "length_constraints:number_words": [
        {"relation": "at least", "num_words": 900},
        {"relation": "less than", "num_words": 900},
    ],
    "punctuation:no_comma": [{}],
    "startend:end_checker": [{"end_phrase": "Is there anything else I can help with?"}],
    "startend:quotation": [{}],
}

SHAPES = {
    "letters": "a" * MB,
    "capitals": "A" * MB,
    "capital_words": "WORD " * (MB // 5),
    "capital_sentences": "A. " * (MB // 3),
    "quoted_capitals": '"A" ' * (MB // 4),
    "section_lines": "SECTION 1\n" * (MB // 10),
    "newlines": "\n" * MB,
    "blank_paragraphs": "a\n\n" * (MB // 3),
    "stars": "*" * MB,
    "bullets": "* a\n" * (MB // 4),
    "brackets": "[" * MB,
    "placeholders": "[a] " * (MB // 4),
    "angles": "<<" * (MB // 2),
    "braces": "{" * MB,
    "mixed": 'Ab1 ,.!?*#[]{}"<>-\n' * (MB // 19),
    "ps": "P.S. " * (MB // 5),
}


def test_every_checker_is_listed() -> None:
    assert set(KWARGS) == set(CHECKERS)


@pytest.mark.slow
@pytest.mark.parametrize("instruction_id", sorted(KWARGS))
def test_every_checker_is_linear_up_to_a_megabyte(instruction_id: str) -> None:
    checker = CHECKERS[instruction_id]
    checker("Warm up. A short TEXT.", KWARGS[instruction_id][0], "prompt")  # lazy imports
    for kwargs in KWARGS[instruction_id]:
        for name, text in SHAPES.items():
            run = functools.partial(_check, checker, kwargs)
            assert_linear(run, text[: MB // 10], text, what=f"{name} {kwargs}")


def _check(checker: Any, kwargs: dict[str, Any], text: str) -> object:
    return checker(text, kwargs, "prompt")
