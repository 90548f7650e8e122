"""Number words to digits, for answer equivalence ("six geese" == "6 geese").

Only plain cardinals and ordinals in English up to the millions are read ("twenty-one",
"one hundred and five", "third"); anything else is left as it is. No arithmetic on model text
beyond adding and multiplying these fixed word values.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["words_to_digits"]

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


def _ordinal_digits(token: str) -> str | None:
    """``21st`` -> ``21``."""
    for suffix in _ORDINAL_SUFFIXES:
        if token.endswith(suffix) and token[: -len(suffix)].isdigit():
            return token[: -len(suffix)]
    return None


def words_to_digits(tokens: Sequence[str]) -> list[str]:
    """Replace each run of number words with its digits (``["twenty", "one"]`` -> ``["21"]``)."""
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
        total, current, j = 0, 0, i
        while j < len(tokens):
            word = tokens[j]
            if word in _UNITS:
                current += _UNITS[word]
            elif word in _TENS:
                current += _TENS[word]
            elif word in _ORDINALS:
                current += _ORDINALS[word]
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
                and (tokens[j + 1] in _UNITS or tokens[j + 1] in _TENS)
                and tokens[j - 1] in _SCALES
            ):
                pass
            else:
                break
            j += 1
        out.append(str(total + current))
        i = j
    return out
