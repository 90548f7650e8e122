"""Words allowed after a number: an allow-list of units, and magnitude words that scale it.

A word after a number is read as a unit only when it is on the list: ``18 dollars``,
``15 \\text{ cm}^2``, ``160 minutes``, ``5.4 \\text{ cents}``. Anything else (``1591 squared``,
``1591 if even``, ``5 eggs``) leaves the answer unread as a literal number, so it cannot pass as
the bare number: a closed list cannot be gamed by an open-ended choice of words, and the cost
(a count noun outside the list) falls on answers that did not box a bare number as asked.
Magnitude words change the value: ``5 million`` is 5,000,000, never 5.

Units are not converted or compared (``5 cm`` equals ``5`` and ``5 m``): the reference answers
of the bundled datasets carry no units, or carry them as decoration.
"""

from __future__ import annotations

import re

__all__ = ["MAGNITUDES", "UNIT_WORDS", "unit_scale"]

MAGNITUDES: dict[str, int] = {
    "hundred": 100,
    "thousand": 1000,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
    "dozen": 12,
}
"""Magnitude words: ``5 million`` is ``5 * 10**6``."""

_SINGULAR_PLURAL = (
    # length, area, volume
    "meter metre centimeter centimetre millimeter millimetre kilometer kilometre inch foot feet "
    "yard mile acre hectare liter litre milliliter millilitre gallon quart pint cup ounce "
    "tablespoon teaspoon unit "
    # mass, time, speed
    "gram kilogram milligram pound ton tonne second minute hour day week month year decade "
    "century centuries "
    # money
    "dollar cent euro rupee penny pennies pence dime nickel yen yuan "
    # angles
    "degree radian "
    # generic counters of answers to word problems and counting problems
    "way people person student item piece point page mph"
)
_ABBREVIATIONS = (
    "mm cm km in ft yd mi sq cu ml gal qt pt oz fl tbsp tsp kg mg lb lbs sec secs min mins hr hrs "
    "yr yrs kph kmh usd deg rad square cubic inches"
)
UNIT_WORDS: frozenset[str] = frozenset(
    {w for base in _SINGULAR_PLURAL.split() for w in (base, base + "s", base + "es")}
    | set(_ABBREVIATIONS.split())
)
"""Lower-case unit words (plurals included); ``per``, ``/`` and ``^2``/``^3`` may join them."""

_SINGLE_LETTER_UNITS = frozenset("m s g l h".split())
_SPLIT = re.compile(r"[\s./-]+|\^\s*\{?\s*[23]\s*\}?")


def unit_scale(words: str, *, in_text: bool) -> int | None:
    """The factor the words after a number apply: 1 for units, a magnitude for ``thousand``
    (optionally followed by units), None when a word is neither (the number is then not read).

    ``in_text``: the words came from ``\\text{}``/``\\mathrm{}``, where a single letter such as
    ``m`` is a unit; bare single letters are variables (``3R^2``), never units.
    """
    tokens = [t for t in _SPLIT.split(words.lower()) if t and t != "per"]
    if not tokens:
        return None
    scale = 1
    if tokens[0] in MAGNITUDES:
        scale, tokens = MAGNITUDES[tokens[0]], tokens[1:]
    for token in tokens:
        if token in UNIT_WORDS:
            continue
        if in_text and token in _SINGLE_LETTER_UNITS:
            continue
        return None
    return scale
