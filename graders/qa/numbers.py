"""Number words to digits, for answer equivalence ("six geese" == "6 geese").

Only plain cardinals and ordinals in English up to the millions are read ("twenty-one",
"one hundred and five", "third"); anything else is left as it is. Ordinals stay apart from
cardinals: "second", "2nd" and "2ND" all read ``2nd``, never ``2`` (a rank is not a count).
No arithmetic on model text beyond adding and multiplying these fixed word values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["digits_value", "is_number", "is_ordinal", "ordinal", "words_to_digits"]

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
    "fortieth": 40,
    "fiftieth": 50,
    "sixtieth": 60,
    "seventieth": 70,
    "eightieth": 80,
    "ninetieth": 90,
    "hundredth": 100,
}
_ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MAX_DIGITS = 30
"""Longer digit runs are not read as numbers (``int`` refuses over 4,300 digits anyway)."""


def digits_value(token: str, max_digits: int = _MAX_DIGITS) -> int | None:
    """The value of ``token`` when it is only decimal digits (of any script, as ``\\d`` reads
    them), at most ``max_digits`` of them; else None. ``str.isdigit`` also accepts superscripts,
    circled and other non-decimal digits that ``int`` refuses, so only this reads digit text."""
    if not token or len(token) > max_digits or not token.isdecimal():
        return None
    return int(token)


def ordinal(n: int) -> str:
    """``21`` -> ``21st``, ``12`` -> ``12th``: the one spelling of a rank."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{dict(enumerate(('th', 'st', 'nd', 'rd'))).get(n % 10, 'th')}"


def is_number(token: str) -> bool:
    """A cardinal written in digits, possibly with decimals (``1969``, ``1.5``)."""
    return _NUMBER.fullmatch(token) is not None


def is_ordinal(token: str) -> bool:
    """A rank in canonical form (``21st``)."""
    return _ordinal_digits(token) == token


def _ordinal_digits(token: str) -> str | None:
    """``21st`` (or the misspelt ``21th``) -> ``21st``."""
    for suffix in _ORDINAL_SUFFIXES:
        value = digits_value(token[: -len(suffix)]) if token.endswith(suffix) else None
        if value is not None:
            return ordinal(value)
    return None


def words_to_digits(tokens: Sequence[str]) -> list[str]:
    """Replace each run of number words with its digits (``["twenty", "one"]`` -> ``["21"]``).

    Words add up only in the order English writes one number (tens then units, after a scale):
    ``nineteen eighty four`` is the two numbers ``19 84``, never 103."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        digits = _ordinal_digits(token)
        if digits is not None:
            out.append(digits)
            i += 1
            continue
        if token not in _UNITS and token not in _TENS and token not in _ORDINALS:
            out.append(token)
            i += 1
            continue
        total, current, j, rank = 0, 0, i, False
        while j < len(tokens):
            word = tokens[j]
            if word in _UNITS:
                if current % 100 and (current % 10 or current % 100 < 20):
                    break  # "nineteen eight", "twenty one two": two numbers, not a sum
                current += _UNITS[word]
            elif word in _TENS:
                if current % 100:
                    break  # "nineteen eighty-four" is not 19 + 84
                current += _TENS[word]
            elif word in _ORDINALS:
                # "one hundredth" is 100th, not 101st: "hundredth" scales like "hundred".
                current = (
                    max(current, 1) * 100 if word == "hundredth" and j > i else current + _ORDINALS[word]
                )
                rank = True
                j += 1
                break
            elif word in _SCALES and j > i:
                scale = _SCALES[word]
                if scale == 100:
                    current = max(current, 1) * 100
                else:
                    total += max(current, 1) * scale
                    current = 0
            elif (
                word == "and"
                and j > i
                and j + 1 < len(tokens)
                and (tokens[j + 1] in _UNITS or tokens[j + 1] in _TENS or tokens[j + 1] in _ORDINALS)
                and tokens[j - 1] in _SCALES
            ):
                pass
            else:
                break
            j += 1
        out.append(ordinal(total + current) if rank else str(total + current))
        i = j
    return out
