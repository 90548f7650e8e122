"""Sorting and filtering a page's table through plain GET parameters (the pages run no script).

``?sort=KEY`` sorts by a column, ascending; ``?sort=-KEY`` descending. Each table names the keys
it knows; an unknown key or filter value is ignored (the table keeps its default order) and the
page says so in a note, as the leaderboard filters do with a date that does not parse. A column
header is a link that sorts by it, and sorts the other way once it is the current order; the
links keep the page's other parameters (search, tag, filters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

__all__ = ["Sort", "choose", "parse_sort", "sort_rows"]

T = TypeVar("T")

#: Longest parameter value echoed back in a note (a hostile one is cut, and escaped by the page).
_ECHO = 40


@dataclass(frozen=True)
class Sort:
    """A table's order: its key, direction, the header links and what was wrong with the request."""

    key: str
    descending: bool
    links: Mapping[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    default: str = ""  # the table's own order, as a parameter

    @property
    def chosen(self) -> bool:
        """Whether the order is other than the table's default (a form must then carry it)."""
        return self.param != self.default

    @property
    def param(self) -> str:
        return ("-" if self.descending else "") + self.key

    def mark(self, key: str) -> str:
        """The arrow a header shows: the current order's direction, none on other columns."""
        if key != self.key:
            return ""
        return "\u2193" if self.descending else "\u2191"

    def aria(self, key: str) -> str:
        """``aria-sort`` for a header cell."""
        if key != self.key:
            return "none"
        return "descending" if self.descending else "ascending"


def _echo(value: str) -> str:
    return value if len(value) <= _ECHO else value[:_ECHO] + "\u2026"


def parse_sort(
    query: Mapping[str, str],
    items: Iterable[tuple[str, str]],
    keys: Mapping[str, bool],
    default: str,
    *,
    path: str,
) -> Sort:
    """The order ``?sort=`` asks for among ``keys`` (key: whether it first sorts descending, as
    counts and dates do), else ``default``; ``items`` are the page's query items, kept in the links."""
    raw = query.get("sort", "").strip()
    errors: list[str] = []
    key, descending = default.removeprefix("-"), default.startswith("-")
    if raw:
        wanted = raw[1:] if raw.startswith("-") else raw
        if wanted in keys:
            key, descending = wanted, raw.startswith("-")
        else:
            known = ", ".join(sorted(keys))
            errors.append(f"sort {_echo(raw)!r} is not a column of this table ({known}); ignored")
    kept = [(k, v) for k, v in items if k != "sort"]
    links = {}
    for k, first_desc in keys.items():
        desc = (not descending) if k == key else first_desc
        links[k] = path + "?" + urlencode([*kept, ("sort", ("-" if desc else "") + k)])
    return Sort(key=key, descending=descending, links=links, errors=tuple(errors), default=default)


def choose(query: Mapping[str, str], name: str, allowed: Sequence[str]) -> tuple[str, str]:
    """A filter parameter's value when it is one of ``allowed`` (``''``: no filter), and the note
    when it is not (then no filter)."""
    raw = query.get(name, "").strip()
    if not raw or raw in allowed:
        return raw, ""
    return "", f"{name} {_echo(raw)!r} is not one of {', '.join(allowed)}; ignored"


def sort_rows(rows: Iterable[T], sort: Sort, columns: Mapping[str, Callable[[T], Any]]) -> list[T]:
    """``rows`` in ``sort``'s order; ties keep their order (the sort is stable). A column's value
    may be None (no value): those rows come last in either direction."""
    value = columns[sort.key]
    rows = list(rows)
    present = [r for r in rows if value(r) is not None]
    absent = [r for r in rows if value(r) is None]
    return sorted(present, key=value, reverse=sort.descending) + absent
