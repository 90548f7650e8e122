"""Hedges, negations and lists of candidates: the shapes of an answer that does not commit.

``maybe Paris``, ``Paris?``, ``not London``, ``Paris is wrong`` hedge or negate;
``Paris or London``, ``Paris, London``, ``Paris / London`` list several candidates.
"""

from __future__ import annotations

import re
import unicodedata

from graders.qa.lexicon import HEDGE_PHRASES, HEDGE_WORDS
from graders.qa.normalize import canonical_text, canonical_tokens

__all__ = ["LIST_SPLIT", "find_hedge", "is_list"]

# Question marks of other scripts and forms (full width, inverted, Arabic, interrobang, emoji).
_QUESTION_MARKS = frozenset("?\uff1f\ufe56\u00bf\u061f\u2e2e\u203d\u2047\u2048\u2049\u2753\u2754")
# Signs that negate or mark as wrong: logical not, ballot and multiplication crosses.
_NEGATION_MARKS = frozenset("\u00ac\u2717\u2718\u274c\u274e\u2716\u2715\u2612")
# Struck-through text: markdown ``~~``, HTML ``<s>``/``<del>``/``<strike>``, combining overlays.
_STRUCK = re.compile(r"~~|[\u0335-\u0338]|<\s*/?\s*(?:s|del|strike)\s*>", re.IGNORECASE)
# Comparison and approximation signs: "<2", ">= 2", "~2", "2 +/- 1" move the number like "less
# than", "at least" and "about" do.
_COMPARISON_MARKS = frozenset(
    "<>~\u00b1\u2213\u2248\u2243\u2245\u223c\u2260\u2264\u2265\u2266\u2267\u2a7d\u2a7e\u226a\u226b"
)
# "> Paris": a markdown quote, not "more than" (but "> 2" and ">2" are "more than 2").
# The relation signs of the Mathematical Operators blocks (≲, ≶, ≺, ⪅, ⩽, ...): "≲ 2" is not 2.
_RELATION_BLOCKS = (("\u2241", "\u22b8"), ("\u2a66", "\u2abc"))
_BLOCKQUOTE = re.compile(r"^[ \t]*>+(?=[ \t]+[^\d\s])", re.MULTILINE)
_OR_MORE = re.compile(r"\d\s*[+\uff0b](?!\s*\d)")  # "18+": eighteen or more

_LIST_MARK = re.compile(r"[,;/|&\n+]|\band\b|\bor\b|^\s*[-*\u2022]|\d[.)]\s", re.IGNORECASE)
LIST_SPLIT = re.compile(r"\s*(?:[,;/|&\n+]|\band\b|\bor\b|\beither\b)\s*", re.IGNORECASE)
"""Where a list of candidates splits into items."""


def find_hedge(text: str) -> str | None:
    """The first hedge, negation or question mark in ``text``, or None.

    Besides words, signs count: any question mark (``Paris？``, ``¿Paris?``), a negation or cross
    (``¬Paris``, ``Paris ✗``), strike-through (``~~Paris~~``), and a comparison sign before or
    after a number (``<2``, ``≥ 2``, ``~2``, ``18+``). Each is returned as found, so an alias
    written with the same sign still matches.
    """
    # NFKC folds full-width and small forms (＜, ～, ﹤, ？) onto the signs listed here.
    marks = set(unicodedata.normalize("NFKC", _BLOCKQUOTE.sub("", text)))
    if marks & _QUESTION_MARKS:
        return "?"
    relations = {m for m in marks if any(lo <= m <= hi for lo, hi in _RELATION_BLOCKS)}
    for found in (marks & _NEGATION_MARKS, marks & _COMPARISON_MARKS, relations):
        if found:
            return min(found)
    struck = _STRUCK.search(text)
    if struck is not None:
        return "struck"
    if _OR_MORE.search(text):
        return "+"
    padded = f" {canonical_text(text)} "
    for phrase in HEDGE_PHRASES:
        if f" {phrase} " in padded:
            return phrase
    for token in canonical_tokens(text):
        if token in HEDGE_WORDS:
            return token
    return None


def is_list(text: str) -> bool:
    """True when ``text`` has the marks of a list of candidates (commas, ``and``/``or``, bullets)."""
    return _LIST_MARK.search(text) is not None
