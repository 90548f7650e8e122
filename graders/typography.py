"""Typography folding shared by the graders: what a reader sees, not how it was encoded.

- :func:`fold_numerals` (math, exact): Unicode minus signs, full-width digits and the thin and
  no-break spaces inside a number (``1\\u2009000``) read as the ASCII number they show.
- :func:`canonical_text` (rubric and IFEval checks, QA): NFKC, invisible format characters
  removed, non-ASCII look-alikes of Latin letters folded to them (the Unicode TR39 confusables
  table of ``confusable-homoglyphs``; ``l``/``1``/``I`` stay apart), small capitals, curly quotes,
  dashes and comma look-alikes made ASCII: ``\\u0440assword`` (Cyrillic ``р``) and
  ``pass\\u200bword`` are the word ``password``.
- :func:`strip_hidden`: HTML comments (an unclosed one runs to the end, as browsers render it)
  and Markdown comment lines removed: text a reader never sees cannot satisfy a required keyword.

Every function is a single linear pass over the text (no backtracking regex).
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from importlib import resources

__all__ = [
    "canonical_text",
    "fold_confusables",
    "fold_numerals",
    "strip_hidden",
    "strip_invisible",
    "strip_markdown_comments",
]

_MINUS = "\u2212\ufe63\uff0d"  # minus, small and full-width hyphen-minus (never a dash: 2\u20133 is a range)
_GROUP_SPACES = "\u2009\u202f\u2007\u2008\u00a0\u200a"
_SPACES = re.compile(f"[{_GROUP_SPACES}\u2000-\u2006\u205f\u3000]")
_DIGIT_GROUP = re.compile(rf"(?<=\d)[{_GROUP_SPACES}](?=\d)")
_MINUS_RE = re.compile(f"[{_MINUS}]")
_FULL_WIDTH = re.compile("[\uff01-\uff5e]")
# blank "letters" used as fillers (they render as nothing but are not format characters)
_FILLERS = "\u034f\u115f\u1160\u2800\u3164\uffa0\ufe00\ufe01\ufe02\ufe03\ufe0e\ufe0f"
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": ",",  # single low-9 quotation mark: it looks like a comma
        "\u060c": ",",  # Arabic comma
        "\u3001": ",",  # ideographic comma
        "\u2e34": ",",  # raised comma
        "\u02cf": ",",
        "\u201b": "'",
        "\u2032": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
_HTML_COMMENT = "<!--"
_MD_COMMENT = re.compile(
    r"^[ \t]{0,3}\[(?://|comment|_)\]:[ \t]*(?:#|<>)[^\n]*$", re.MULTILINE | re.IGNORECASE
)


def fold_numerals(text: str) -> str:
    """Minus signs, full-width ASCII and digit-group spaces as plain ASCII (see module doc)."""
    if text.isascii():
        return text
    text = _MINUS_RE.sub("-", text)
    text = _FULL_WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    text = _DIGIT_GROUP.sub("", text)
    return _SPACES.sub(" ", text)


@functools.cache
def _invisible_table() -> dict[int, None]:
    """Every format character (category Cf: zero-width spaces and joiners, the soft hyphen, the
    word joiner, BOMs, bidi controls, tags) and the blank fillers, as a deletion table."""
    table: dict[int, None] = {
        cp: None for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"
    }
    table.update({ord(ch): None for ch in _FILLERS})
    return table


def strip_invisible(text: str) -> str:
    """``text`` without the characters that render as nothing (see :func:`_invisible_table`)."""
    return text if text.isascii() else text.translate(_invisible_table())


_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


@functools.cache
def _confusables() -> dict[int, str]:
    """Non-ASCII code point -> the ASCII letters it is confusable with (TR39 prototypes), as a
    :meth:`str.translate` table (loaded on first use)."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    table: dict[int, str] = {}
    for char, entries in json.loads(data).items():
        if char.isascii() or len(char) != 1:
            continue
        for entry in entries:
            target = entry["c"].replace("\u200e", "")
            if target.isascii() and target.isalnum():
                table[ord(char)] = target
                break
    # small capitals (``\u1d1b`` LATIN LETTER SMALL CAPITAL T) read as capitals but are lower-case
    # letters, so "\u1d1bhis" passes str.islower(); TR39 does not map them to Latin, this does
    for cp in range(sys.maxunicode + 1):
        name = unicodedata.name(chr(cp), "")
        if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == len(
            "LATIN LETTER SMALL CAPITAL X"
        ):
            table[cp] = name[-1]
    return table


def fold_confusables(text: str) -> str:
    """Non-ASCII look-alikes of Latin letters and digits replaced by them (ASCII kept as is)."""
    return text if text.isascii() else text.translate(_confusables())


def canonical_text(text: str) -> str:
    """What a reader sees: NFKC, no invisible characters, look-alikes folded, ASCII quotes."""
    if text.isascii():
        return text
    text = strip_invisible(unicodedata.normalize("NFKC", text))
    return fold_confusables(text.translate(_QUOTES))


def strip_hidden(text: str) -> str:
    """``text`` without HTML comments and Markdown comment lines (hidden when rendered)."""
    if _HTML_COMMENT in text:
        parts: list[str] = []
        pos = 0
        while True:
            start = text.find(_HTML_COMMENT, pos)
            if start == -1:
                parts.append(text[pos:])
                break
            parts.append(text[pos:start])
            end = text.find("-->", start + 4)
            if end == -1:
                break
            pos = end + 3
        text = " ".join(parts)
    return strip_markdown_comments(text)


def strip_markdown_comments(text: str) -> str:
    """``text`` without Markdown comment lines (``[//]: # (...)``)."""
    return _MD_COMMENT.sub("", text) if "]:" in text else text
