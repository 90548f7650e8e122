"""Reading dates from canonical tokens, for answer equivalence across formats.

``october 9 2001``, ``9th of october 2001``, ``oct 2001``, ``2001 10 09`` (ISO), ``10 09 2001``
(month first when it can be, as in the US; else day first) and ``2001`` are all dates; a date may
lack its day or month. Anything else is not a date (``None``).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass

from graders.qa.numbers import digits_value, is_ordinal

__all__ = ["MONTH_WORDS", "PartialDate", "parse_date"]

_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
MONTH_WORDS = frozenset(_MONTHS)
"""Month names and abbreviations, lower case."""
_LEADING = frozenset({"on", "in"})
_WEEKDAYS = {
    name: i
    for i, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
_DOTTED = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")  # 20.07.1969: day first, as where dots are used


@dataclass(frozen=True)
class PartialDate:
    """A calendar date of which the month and day may be unknown."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def covers(self, other: PartialDate) -> bool:
        """True when this date states every field that ``other`` states."""
        return all(
            mine is not None or theirs is None
            for mine, theirs in ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        )

    def agrees_with(self, other: PartialDate) -> bool:
        """True when every field known on both sides is equal and both state the same year.

        Without years on both sides only month and day can be compared, and only when neither
        side states a year (a gold "October" cannot confirm "October 2017").
        """
        if (self.year is None) != (other.year is None):
            return False
        if self.year is not None and self.year != other.year:
            return False
        if self.year is None and (self.month is None or self.month != other.month):
            return False
        for mine, theirs in ((self.month, other.month), (self.day, other.day)):
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True


def _year(token: str) -> int | None:
    return digits_value(token) if len(token) in (3, 4) else None


def _day(token: str) -> int | None:
    if is_ordinal(token):
        token = token[:-2]
    value = digits_value(token, max_digits=2)
    return value if value is not None and 1 <= value <= 31 else None


def parse_date(tokens: Sequence[str]) -> PartialDate | None:
    """The date that ``tokens`` (canonical, see :mod:`graders.qa.normalize`) spell, or None.

    A weekday may go with a full date (``sunday july 20 1969``) when it is that date's weekday;
    ``20.07.1969`` is day first."""
    words = list(tokens)
    weekdays = [_WEEKDAYS[w] for w in words if w in _WEEKDAYS]
    if weekdays:
        date = parse_date([w for w in words if w not in _WEEKDAYS])
        if date is None or date.year is None or date.month is None or date.day is None:
            return None
        try:
            actual = datetime.date(date.year, date.month, date.day).weekday()
        except ValueError:
            return None
        return date if all(day == actual for day in weekdays) else None
    if len(words) == 1 and (dotted := _DOTTED.fullmatch(words[0])) is not None:
        d, m, y = (int(part) for part in dotted.groups())
        return PartialDate(y, m, d) if 1 <= m <= 12 and 1 <= d <= 31 else None
    while words and words[0] in _LEADING:
        words = words[1:]
    if len(words) == 4 and words[1] == "of":  # "9th of october 2001"
        words = [words[0], *words[2:]]
    n = len(words)
    if n == 1:
        year = _year(words[0])
        if year is not None:
            return PartialDate(year)
        return PartialDate(None, _MONTHS[words[0]]) if words[0] in _MONTHS and words[0] != "may" else None
    if n == 2:
        month = _MONTHS.get(words[0])
        year = _year(words[1])
        if month is not None and year is not None:
            return PartialDate(year, month)
        if words[0] in _MONTHS and _day(words[1]) is not None:
            return PartialDate(None, _MONTHS[words[0]], _day(words[1]))
        if words[1] in _MONTHS and _day(words[0]) is not None:
            return PartialDate(None, _MONTHS[words[1]], _day(words[0]))
        return None
    if n == 3:
        a, b, c = words
        year = _year(c)
        if year is not None and a in _MONTHS and _day(b) is not None:
            return PartialDate(year, _MONTHS[a], _day(b))
        if year is not None and b in _MONTHS and _day(a) is not None:
            return PartialDate(year, _MONTHS[b], _day(a))
        iso_year = _year(a) if len(a) == 4 else None
        month_b, month_a = digits_value(b, max_digits=2), digits_value(a, max_digits=2)
        if iso_year is not None and month_b is not None and 1 <= month_b <= 12 and _day(c) is not None:
            return PartialDate(iso_year, month_b, _day(c))
        if year is not None and len(c) == 4 and month_a is not None and _day(b) is not None:
            # "10/09/2001": month first (US) when it can be, else day first ("22/11/1963").
            if 1 <= month_a <= 12:
                return PartialDate(year, month_a, _day(b))
            if _day(a) is not None and month_b is not None and 1 <= month_b <= 12:
                return PartialDate(year, month_b, _day(a))
    return None
