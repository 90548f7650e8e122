"""Answer normalisation: SQuAD's, and a canonical form for the equivalence layer.

- :func:`squad_normalize` is the SQuAD/NQ-open evaluation normalisation (lower case, ASCII
  punctuation removed, articles removed, whitespace collapsed), used for ``em`` and ``f1``.
- :func:`canonical_tokens` goes further for equivalence: repairs common text damage (UTF-8
  read as Latin-1, literal ``\\u00e9`` escapes, non-breaking spaces), folds accents, treats every
  punctuation mark as a word break (so ``Abdul-Jabbar`` and ``Abdul - Jabbar`` agree) except
  apostrophes inside words (``don't`` -> ``dont``), drops articles and writes number words as digits.
  A final ``a`` is the letter, not an article (``vitamin A``); a number with a scale word is its
  value (``1 million`` = ``1000000``).
  Numbers are read as values: ``1,500`` = ``1500``, ``1.50`` = ``1.5`` (one token, so ``5.5`` is
  not ``5``), a leading minus sign is the word ``minus`` (``-5`` is not ``5``), and a
  sequence noun followed by a number is a rank (``season 6`` = ``sixth season`` = ``6th season``).
"""

from __future__ import annotations

import re
import string
import unicodedata
from decimal import Decimal

from graders.qa.numbers import digits_value, ordinal, words_to_digits

__all__ = [
    "canonical_text",
    "canonical_tokens",
    "repair_mojibake",
    "repair_text",
    "squad_normalize",
    "squad_tokens",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_APOSTROPHES = re.compile(r"(?<=\w)\s?['\u2019\u2018`]\s?(?=\w)")
_ARTICLE_WORDS = frozenset({"a", "an", "the"})
# A minus sign: at the start or after a space or bracket, right before a digit ("-5", "(-5)").
# A dash after a number ("70 - 85", "49--47") is a range, and an en dash is never a sign.
_SIGN = re.compile(r"(?<![^\s(\[])[-\u2212](?=\d)")
_THOUSANDS = re.compile(r"(?<=\d),\s?(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"^(\d+)\.(\d*?)0*$")
# Nouns whose number is a rank: "season 6" is the sixth season, "chapter 11" the eleventh chapter.
_SEQUENCE_NOUNS = frozenset(
    "season episode chapter volume book part act scene series edition round game stage grade level "
    "amendment day week phase canto verse track".split()
)
_ABBREVIATIONS = {"st": "saint", "mt": "mount"}
_SCALE_VALUES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "trillion": 10**12}
_PLAIN_NUMBER = re.compile(r"\d{1,15}(?:\.\d{1,6})?")
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


def repair_mojibake(text: str) -> str:
    """UTF-8 that was decoded as Latin-1 (``Ã©``) decoded again; other text as it is."""
    if "Ã" in text or "Â" in text:
        try:
            return text.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return text


def repair_text(text: str) -> str:
    """Undo common damage: UTF-8 decoded as Latin-1 (``Ã©``), ``\\u00e9`` escapes, odd spaces."""
    text = repair_mojibake(text)
    if "\\u" in text:
        text = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return text.replace("\\", " ")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def canonical_text(text: str, *, keep_case: bool = False) -> str:
    """Lower-cased, accent-folded text with punctuation as spaces (articles and numbers kept);
    ``keep_case`` keeps the letters' case (the same words otherwise)."""
    text = _fold(repair_text(text))
    text = text if keep_case else text.lower()
    text = _APOSTROPHES.sub("", text)
    text = _SIGN.sub(" minus ", text)
    text = _THOUSANDS.sub("", text).replace("%", " percent ")
    out = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        if ch == "." and 0 < i < last and text[i - 1].isdigit() and text[i + 1].isdigit():
            out.append(ch)  # a decimal point
            continue
        category = unicodedata.category(ch)
        out.append(" " if category[0] in "PSZC" else ch)
    return " ".join("".join(out).split())


def _number_value(token: str) -> str:
    """``1.50`` -> ``1.5``, ``2.0`` -> ``2``: one spelling per decimal value."""
    match = _DECIMAL.match(token)
    if match is None:
        return token
    whole, fraction = match.groups()
    return f"{whole}.{fraction}" if fraction else whole


def _ranks(tokens: list[str]) -> list[str]:
    """``season 6`` -> ``6th season`` (see ``_SEQUENCE_NOUNS``)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        rank = digits_value(nxt, max_digits=3) if token in _SEQUENCE_NOUNS else None
        if rank is not None:
            out.extend((ordinal(rank), token))
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _articles_dropped(tokens: list[str], cased: list[str]) -> list[str]:
    """``the``/``an`` dropped, and ``a`` where it is an article: before another word, written
    in lower case or first. A final ``a`` and a capital ``A`` inside a name are the letter
    ("vitamin A", "Plan A", "John A. Smith", the answer "A")."""
    last = len(tokens) - 1
    # case tells a letter from an article only in mixed-case text ("6 GEESE A-LAYING" has none)
    aligned = len(cased) == len(tokens) and any(t != t.upper() for t in cased)

    def article(i: int, token: str) -> bool:
        if token != "a":
            return token in _ARTICLE_WORDS
        return i < last and (i == 0 or not aligned or cased[i] == "a")

    return [t for i, t in enumerate(tokens) if not article(i, t)]


def _scaled(tokens: list[str]) -> list[str]:
    """``1 million`` -> ``1000000``, ``2.5 thousand`` -> ``2500``: a number times its scale word."""
    out: list[str] = []
    for token in tokens:
        scale = _SCALE_VALUES.get(token)
        if scale is not None and out and _PLAIN_NUMBER.fullmatch(out[-1]):
            value = Decimal(out[-1]) * scale
            out[-1] = _number_value(f"{value:f}")
            continue
        out.append(token)
    return out


def canonical_tokens(text: str) -> tuple[str, ...]:
    """Canonical tokens: :func:`canonical_text`, articles dropped, number words as digits,
    numbers times their scale words, decimals by value, ``season 6`` as ``6th season``,
    ``St.``/``Mt.`` as ``saint``/``mount``."""
    words = _articles_dropped(canonical_text(text).split(), canonical_text(text, keep_case=True).split())
    tokens = [_ABBREVIATIONS.get(t, _APPROXIMATE.get(t, t)) for t in words]
    return tuple(_ranks(_scaled([_number_value(t) for t in words_to_digits(tokens)])))
