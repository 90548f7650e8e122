"""The 25 IFEval instruction checkers, one small function each.

Every checker takes the response, the instruction's keyword arguments (as stored in the
dataset, with ``None`` values dropped) and the prompt, and returns whether the response follows
the instruction. The semantics are those of the reference implementation
(google-research ``instruction_following_eval``), including its quirks, which are noted where
they surprise. Strings taken from the task (keywords, markers, phrases) are matched literally
(``re.escape``), never as patterns; model text is never executed or used as a pattern.

``CHECKERS`` maps each instruction id to its checker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from graders.ifeval import _text

__all__ = ["CHECKERS", "Checker", "InvalidInstructionError"]

Checker = Callable[[str, Mapping[str, Any], str], bool]


class InvalidInstructionError(ValueError):
    """An instruction's id or keyword arguments are not valid IFEval (a task bug, not a model error)."""


def _compare(actual: int, relation: Any, threshold: Any) -> bool:
    if relation == "less than":
        return actual < int(threshold)
    if relation == "at least":
        return actual >= int(threshold)
    raise InvalidInstructionError(f"relation must be 'less than' or 'at least', got {relation!r}")


def _require(kwargs: Mapping[str, Any], key: str) -> Any:
    if kwargs.get(key) is None:
        raise InvalidInstructionError(f"missing keyword argument {key!r}")
    return kwargs[key]


# -- change_case ---------------------------------------------------------------------------------
def capital_word_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Count of all-capital tokens (``nltk.word_tokenize``, hyphenated words are one) vs a threshold."""
    relation, threshold = _require(kwargs, "capital_relation"), int(_require(kwargs, "capital_frequency"))
    # Counting stops at the threshold: "less than" and "at least" are settled there.
    return _compare(_text.count_capital_words(response, limit=max(threshold, 0)), relation, threshold)


def english_capital(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """All letters upper case and the language detected as English (undetectable counts as followed)."""
    # the case test first: language detection is the slow part, and only matters when it passes
    return response.isupper() and _text.detect_language(response) in (None, "en")


def english_lowercase(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """All letters lower case and the language detected as English (undetectable counts as followed)."""
    return response.islower() and _text.detect_language(response) in (None, "en")


# -- combination ---------------------------------------------------------------------------------
def repeat_prompt(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The response starts (case-insensitively, after stripping) with ``prompt_to_repeat``."""
    target = str(_require(kwargs, "prompt_to_repeat")).strip().lower()
    return response.strip().lower().startswith(target)


def two_responses(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly two different non-empty parts separated by ``******`` (empty parts only at the ends)."""
    parts = response.split("******")
    valid = []
    for index, part in enumerate(parts):
        if part.strip():
            valid.append(part)
        elif index not in (0, len(parts) - 1):
            return False
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


# -- detectable_content --------------------------------------------------------------------------
def _count_placeholders(text: str) -> int:
    """Matches of the reference's ``\\[.*?\\]``, counted in linear time (no regex backtracking)."""
    count = 0
    for line in text.split("\n"):
        pos = 0
        while (start := line.find("[", pos)) >= 0:
            end = line.find("]", start + 1)
            if end < 0:
                break
            count += 1
            pos = end + 1
    return count


def number_placeholders(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_placeholders`` square-bracket placeholders such as ``[address]`` (within a line)."""
    return _count_placeholders(response) >= int(_require(kwargs, "num_placeholders"))


def postscript(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """A postscript marker (``P.S.``, ``P.P.S`` with optional spaces, or the given marker) anywhere."""
    marker = str(_require(kwargs, "postscript_marker")).strip()
    if marker == "P.P.S":
        pattern = r"p\.\s?p\.\s?s"
    elif marker == "P.S.":
        pattern = r"p\.\s?s\."
    else:
        pattern = re.escape(marker.lower())
    # The reference's ``\s*MARKER.*$`` (MULTILINE) matches wherever the marker occurs.
    return re.search(pattern, response.lower()) is not None


# -- detectable_format ---------------------------------------------------------------------------
_CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def constrained_response(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """One of "My answer is yes/no/maybe." appears in the response (the reference tests containment)."""
    value = response.strip()
    return any(option in value for option in _CONSTRAINED_OPTIONS)


def json_format(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The whole response (minus a surrounding markdown code fence) parses as JSON."""
    value = response.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        if value.startswith(prefix):
            value = value[len(prefix) :]
            break
    value = value.removesuffix("```").strip()
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        # Nesting deeper than Python's recursion limit ("[[[[..."): the reference crashes here;
        # a model's output must not crash the grader, and it is not usable JSON.
        return False
    return True


def multiple_sections(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_sections`` sections, each introduced by ``<section_spliter> <number>``."""
    splitter = re.escape(str(_require(kwargs, "section_spliter")).strip())
    sections = re.split(r"\s?" + splitter + r"\s?\d+\s?", response)
    return len(sections) - 1 >= int(_require(kwargs, "num_sections"))


def _count_line_items(text: str, marker: str) -> int:
    """Matches of the reference's ``^\\s*\\*[^\\*].*$`` (marker ``*``) or ``^\\s*-.*$`` (marker ``-``).

    Emulated in linear time: from each line start the pattern skips whitespace (newlines too), so
    every line start inside one whitespace run reaches the same first visible character.
    """
    count, size, pos = 0, len(text), 0
    visible = -1  # first non-whitespace index at or after the current line start
    while pos <= size:
        if pos > visible:
            visible = pos
            while visible < size and text[visible].isspace():
                visible += 1
        matched = visible < size and text[visible] == marker
        if matched and marker == "*":
            matched = visible + 1 < size and text[visible + 1] != "*"
        if matched:
            count += 1
            newline = text.find("\n", visible + (2 if marker == "*" else 1))
            if newline < 0:
                break
            pos = newline if text[newline - 1] == "\n" else newline + 1
            continue
        newline = text.find("\n", pos)
        if newline < 0:
            break
        pos = newline + 1
    return count


def number_bullet_lists(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``num_bullets`` markdown bullet lines (``* item`` or ``- item``), counted as IFEval does."""
    count = _count_line_items(response, "*") + _count_line_items(response, "-")
    return count == int(_require(kwargs, "num_bullets"))


_HIGHLIGHT = re.compile(r"\*[^\n*]*\*")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*[^\n*]*\*\*")


def number_highlighted_sections(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """At least ``num_highlights`` non-empty ``*highlighted*`` spans (``**bold**`` spans count too)."""
    count = sum(1 for h in _HIGHLIGHT.findall(response) if h.strip("*").strip())
    count += sum(1 for h in _DOUBLE_HIGHLIGHT.findall(response) if h[2:-2].strip())
    return count >= int(_require(kwargs, "num_highlights"))


def title(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """A non-empty title in double angular brackets, ``<<like this>>``, on one line.

    Per line this is the reference's greedy ``<<[^\\n]+>>`` match (first ``<<`` to last ``>>``),
    found in linear time.
    """
    for line in response.split("\n"):
        start, end = line.find("<<"), line.rfind(">>")
        if start >= 0 and end >= start + 3 and line[start : end + 2].lstrip("<").rstrip(">").strip():
            return True
    return False


# -- keywords ------------------------------------------------------------------------------------
def keyword_existence(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Every keyword occurs (case-insensitive substring, as in the reference: "cat" is in "catalog")."""
    keywords = _require(kwargs, "keywords")
    return all(re.search(re.escape(str(k)), response, flags=re.IGNORECASE) for k in keywords)


def forbidden_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No forbidden word occurs as a whole word (case-insensitive)."""
    words = _require(kwargs, "forbidden_words")
    return not any(re.search(r"\b" + re.escape(str(w)) + r"\b", response, flags=re.IGNORECASE) for w in words)


def keyword_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Case-insensitive occurrences of ``keyword`` (substrings count) vs ``frequency``."""
    keyword = str(_require(kwargs, "keyword")).strip()
    count = len(re.findall(re.escape(keyword), response, flags=re.IGNORECASE))
    return _compare(count, _require(kwargs, "relation"), _require(kwargs, "frequency"))


def letter_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Case-insensitive occurrences of one ``letter`` vs ``let_frequency``."""
    letter = str(_require(kwargs, "letter")).strip().lower()
    count = response.lower().count(letter) if len(letter) == 1 else 0
    return _compare(count, _require(kwargs, "let_relation"), _require(kwargs, "let_frequency"))


# -- language ------------------------------------------------------------------------------------
def response_language(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``langdetect`` finds the language ``language`` (undetectable counts as followed, as in IFEval)."""
    language = _text.detect_language(response)
    return language is None or language == _require(kwargs, "language")


# -- length_constraints --------------------------------------------------------------------------
def nth_paragraph_first_word(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """``num_paragraphs`` paragraphs split on blank lines, paragraph ``nth_paragraph`` starting with
    ``first_word`` (lower-cased, leading quotes dropped, cut at the first punctuation mark)."""
    paragraphs = response.split("\n\n")
    count = sum(1 for p in paragraphs if p.strip())
    nth = int(_require(kwargs, "nth_paragraph"))
    # The reference indexes the raw split (empty pieces included) after counting non-empty ones.
    if not 1 <= nth <= count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for char in word:
        if char in {".", ",", "?", "!", "'", '"'}:
            break
        first += char.lower()
    expected = str(_require(kwargs, "first_word")).lower()
    return count == int(_require(kwargs, "num_paragraphs")) and first == expected


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


def number_paragraphs(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Exactly ``num_paragraphs`` paragraphs separated by the markdown divider ``***``
    (an empty paragraph is allowed only at either end)."""
    paragraphs = _DIVIDER.split(response)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if index in (0, len(paragraphs) - 1):
                count -= 1
            else:
                return False
    return count == int(_require(kwargs, "num_paragraphs"))


def number_sentences(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Sentences (NLTK's English Punkt model) vs ``num_sentences``."""
    relation, threshold = _require(kwargs, "relation"), int(_require(kwargs, "num_sentences"))
    # Counting stops at the threshold: "less than" and "at least" are settled there.
    return _compare(_text.count_sentences(response, limit=max(threshold, 1)), relation, threshold)


def number_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Words (runs of ``\\w``) vs ``num_words``."""
    return _compare(_text.count_words(response), _require(kwargs, "relation"), _require(kwargs, "num_words"))


# -- punctuation, startend -----------------------------------------------------------------------
def no_comma(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """No ASCII comma anywhere."""
    return "," not in response


def end_checker(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """Ends (case-insensitively, ignoring surrounding whitespace and double quotes) with ``end_phrase``."""
    phrase = str(_require(kwargs, "end_phrase")).strip().lower()
    return response.strip().strip('"').lower().endswith(phrase)


def quotation(response: str, kwargs: Mapping[str, Any], prompt: str) -> bool:
    """The whole response (stripped) is wrapped in double quotation marks."""
    value = response.strip()
    return len(value) > 1 and value[0] == '"' and value[-1] == '"'


CHECKERS: Mapping[str, Checker] = {
    "change_case:capital_word_frequency": capital_word_frequency,
    "change_case:english_capital": english_capital,
    "change_case:english_lowercase": english_lowercase,
    "combination:repeat_prompt": repeat_prompt,
    "combination:two_responses": two_responses,
    "detectable_content:number_placeholders": number_placeholders,
    "detectable_content:postscript": postscript,
    "detectable_format:constrained_response": constrained_response,
    "detectable_format:json_format": json_format,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:title": title,
    "keywords:existence": keyword_existence,
    "keywords:forbidden_words": forbidden_words,
    "keywords:frequency": keyword_frequency,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_words": number_words,
    "punctuation:no_comma": no_comma,
    "startend:end_checker": end_checker,
    "startend:quotation": quotation,
}
"""Instruction id -> checker, for every instruction in IFEval's 541 prompts."""
