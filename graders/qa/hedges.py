"""Hedges, negations and lists of candidates: the shapes of an answer that does not commit.

``maybe Paris``, ``Paris?``, ``not London``, ``Paris is wrong`` hedge or negate;
``Paris or London``, ``Paris, London``, ``Paris / London`` list several candidates.
"""

from __future__ import annotations

import re

from graders.qa.lexicon import HEDGE_PHRASES, HEDGE_WORDS
from graders.qa.normalize import canonical_text, canonical_tokens

__all__ = ["LIST_SPLIT", "find_hedge", "is_list"]

_LIST_MARK = re.compile(r"[,;/|&\n+]|\band\b|\bor\b|^\s*[-*\u2022]|\d[.)]\s", re.IGNORECASE)
LIST_SPLIT = re.compile(r"\s*(?:[,;/|&\n+]|\band\b|\bor\b|\beither\b)\s*", re.IGNORECASE)
"""Where a list of candidates splits into items."""


def find_hedge(text: str) -> str | None:
    """The first hedge, negation or question mark in ``text``, or None."""
    if "?" in text:
        return "?"
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
