"""The reader's view (graders.reader) and the graders that judge it: IFEval in hardened mode and
the rubric's deterministic checks read what a reader sees, generated over markup disguises."""

from __future__ import annotations

import html
import string
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graders.ifeval import check as ifeval_check
from graders.reader import MARKUP_CHARS, reader_view
from graders.rubric import load_rubric
from graders.typography import canonical_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strategies import GENERATED, markup_wrap  # noqa: E402

_WORDS = st.text(string.ascii_lowercase, min_size=3, max_size=10)


@st.composite
def disguised(draw: st.DrawFn, word: str) -> str:
    """``word`` as a reader sees it, split by markup that renders as nothing or as the letter."""
    cut = draw(st.integers(1, len(word) - 1))
    head, tail = word[:cut], word[cut:]
    kind = draw(st.sampled_from(["emphasis", "comment", "entity", "hex entity", "span", "zero width"]))
    if kind == "emphasis":
        return f"{head}**{tail[0]}**{tail[1:]}"
    if kind == "comment":
        return f"{head}<!---->{tail}"
    if kind == "entity":
        return f"{head}&#{ord(tail[0])};{tail[1:]}"
    if kind == "hex entity":
        return f"{head}&#x{ord(tail[0]):x};{tail[1:]}"
    if kind == "span":
        return f"{head}<span>{tail}</span>"
    return f"{head}\u200b{tail}"


@st.composite
def hidden(draw: st.DrawFn, word: str) -> str:
    """``word`` where a reader never sees it."""
    return draw(
        st.sampled_from(
            [
                f"<!-- {word} -->",
                f"<span hidden>{word}</span>",
                f'<div style="display: none">{word}</div>',
                f'<span aria-hidden="true">{word}</span>',
                f"<script>var x = '{word}';</script>",
                f'[ref]: https://example.com "{word}"',
                f"[//]: # ({word})",
            ]
        )
    )


@GENERATED
@given(st.text(alphabet=st.characters(blacklist_characters="".join(MARKUP_CHARS)), max_size=200))
def test_text_without_markup_is_only_folded(text: str) -> None:
    assert reader_view(text) == canonical_text(text)


@GENERATED
@given(st.lists(_WORDS, min_size=1, max_size=8))
def test_entities_and_emphasis_render_as_their_text(words: list[str]) -> None:
    sentence = " ".join(words)
    assert reader_view(html.escape(sentence)) == sentence
    assert reader_view(f"**{sentence}**") == sentence


@GENERATED
@given(st.lists(_WORDS, min_size=1, max_size=5), st.sampled_from(["\u2022", "\u25e6", "\u25aa", "ul"]))
def test_bullets_of_any_kind_become_list_lines(items: list[str], bullet: str) -> None:
    if bullet == "ul":
        text = "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"
    else:
        text = "\n".join(f"{bullet} {i}" for i in items)
    assert reader_view(text).splitlines() == [f"- {i}" for i in items]


def _ifeval(response: str, instruction: str, kwargs: dict[str, Any]) -> bool:
    verdict = ifeval_check(
        response, instruction_id_list=[instruction], kwargs=[kwargs], prompt="p", hardened=True
    )
    return verdict.strict[0]


@GENERATED
@given(_WORDS, st.data())
def test_ifeval_a_disguised_forbidden_word_is_the_word(word: str, data: st.DataObject) -> None:
    kwargs = {"forbidden_words": [word]}
    assert (
        _ifeval("Nothing to see here at all.", "keywords:forbidden_words", kwargs)
        or word in "nothing to see here at all"
    )
    response = f"I wrote {data.draw(disguised(word))} today."
    assert not _ifeval(response, "keywords:forbidden_words", kwargs), response


@GENERATED
@given(st.sampled_from(["&#44;", "&#x2c;", "&comma;", "<b>,</b>", "\uff0c"]))
def test_ifeval_a_comma_written_as_markup_is_a_comma(comma: str) -> None:
    assert _ifeval("one two three", "punctuation:no_comma", {})
    assert not _ifeval(f"one{comma} two", "punctuation:no_comma", {})


@GENERATED
@given(_WORDS, st.data())
def test_ifeval_a_required_keyword_must_be_seen(word: str, data: st.DataObject) -> None:
    kwargs = {"keywords": [word]}
    seen = data.draw(markup_wrap(word))
    assert _ifeval(f"Here it is: {seen}.", "keywords:existence", kwargs)
    unseen = data.draw(hidden(word))
    assert not _ifeval(f"Nothing here.\n\n{unseen}\n", "keywords:existence", kwargs), unseen


async def _rubric(check: dict[str, Any], response: str) -> bool:
    rubric = load_rubric({"id": "t", "checks": [check]})
    return (await rubric(response, reference=None)).passed


@GENERATED
@given(st.lists(_WORDS, min_size=2, max_size=3), st.data())
async def test_rubric_forbidden_phrase_under_markup_is_found(words: list[str], data: st.DataObject) -> None:
    phrase = " ".join(words)
    forbidden = {"id": "f", "kind": "contains", "text": [phrase], "mode": "none", "ignore_case": True}
    first = data.draw(disguised(words[0])) if len(words[0]) > 1 else words[0]
    response = f"Well, {first} {' '.join(words[1:])} indeed."
    assert not await _rubric(forbidden, response), response


@GENERATED
@given(_WORDS, st.data())
async def test_rubric_required_keyword_must_be_seen(word: str, data: st.DataObject) -> None:
    required = {"id": "r", "kind": "contains", "text": [word], "mode": "all"}
    assert await _rubric(required, f"It is {data.draw(markup_wrap(word))}.")
    assert not await _rubric(required, f"Nothing.\n\n{data.draw(hidden(word))}\n")


@GENERATED
@given(st.lists(_WORDS, min_size=2, max_size=4), st.sampled_from(["\u2022", "ul", "-", "*"]))
async def test_rubric_a_forbidden_bullet_list_is_found_however_written(items: list[str], bullet: str) -> None:
    no_bullets = {
        "id": "b",
        "kind": "regex",
        "pattern": r"^\s*[-*] ",
        "multiline": True,
        "expect": "no_match",
    }
    if bullet == "ul":
        response = "Points:\n<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"
    else:
        response = "Points:\n" + "\n".join(f"{bullet} {i}" for i in items)
    assert await _rubric(no_bullets, "Points: " + ", ".join(items) + ".")
    assert not await _rubric(no_bullets, response), response


def _cpu(text: str) -> float:
    started = time.process_time()
    reader_view(text)
    return time.process_time() - started


@pytest.mark.parametrize("unit", ["<!--", "<?", "<a ", "<![CDATA[", "</a ", "[a", "**a", "&#"])
def test_hostile_markup_renders_in_linear_time(unit: str) -> None:
    # CPU time at ten times the text: about ten times (linear), not a hundred (quadratic)
    small, large = unit * (2_000 // len(unit)), unit * (20_000 // len(unit))
    _cpu(small + " warm")
    # the least of three runs (distinct texts: views are cached) on each side
    fast_small = min(_cpu(f"{small} {i}") for i in range(3))
    fast_large = min(_cpu(f"{large} {i}") for i in range(3))
    ratio = fast_large / max(fast_small, 5e-3)
    assert ratio < 40, f"{unit!r}: {ratio:.0f}x the CPU time for 10x the text"
