"""Answer normalisation: SQuAD's, and a canonical form for the equivalence layer.

- :func:`squad_normalize` is the SQuAD/NQ-open evaluation normalisation (lower case, ASCII
  punctuation removed, articles removed, whitespace collapsed), used for ``em`` and ``f1``.
- :func:`canonical_tokens` goes further for equivalence: repairs common text damage (UTF-8
  read as Latin-1, literal ``\\u00e9`` escapes, non-breaking spaces), folds accents, treats every
  punctuation mark as a word break (so ``Abdul-Jabbar`` and ``Abdul - Jabbar`` agree) except
  apostrophes inside words (``don't`` -> ``dont``), drops articles and writes number words as digits.
"""

from __future__ import annotations

import re
import string
import unicodedata

from graders.qa.numbers import words_to_digits

__all__ = ["canonical_text", "canonical_tokens", "repair_text", "squad_normalize", "squad_tokens"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_APOSTROPHES = re.compile(r"(?<=\w)\s?['\u2019\u2018`]\s?(?=\w)")
_ARTICLE_WORDS = frozenset({"a", "an", "the"})
_APPROXIMATE = {
    "around": "about",
    "approximately": "about",
    "roughly": "about",
    "circa": "about",
    "ca": "about",
}


def squad_normalize(text: str) -> str:
    """SQuAD normalisation: lower case, drop ASCII punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def squad_tokens(text: str) -> list[str]:
    """Tokens of :func:`squad_normalize` (the unit of token F1)."""
    return squad_normalize(text).split()


def repair_text(text: str) -> str:
    """Undo common damage: UTF-8 decoded as Latin-1 (``Ã©``), ``\\u00e9`` escapes, odd spaces."""
    if "Ã" in text or "Â" in text:
        try:
            text = text.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    if "\\u" in text:
        text = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text.replace("\\", " ")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def canonical_text(text: str) -> str:
    """Lower-cased, accent-folded text with punctuation as spaces (articles and numbers kept)."""
    text = _fold(repair_text(text)).lower()
    text = _APOSTROPHES.sub("", text)
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        out.append(" " if category[0] in "PSZC" else ch)
    return " ".join("".join(out).split())


def canonical_tokens(text: str) -> tuple[str, ...]:
    """Canonical tokens: :func:`canonical_text`, articles dropped, number words as digits."""
    tokens = [_APPROXIMATE.get(t, t) for t in canonical_text(text).split() if t not in _ARTICLE_WORDS]
    return tuple(words_to_digits(tokens))
