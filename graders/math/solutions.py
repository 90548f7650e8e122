"""A reference with several solutions, and the ways an answer may list them.

Where the reference is a solution list (``2, 3``, ``\\{2, 3\\}``, ``x = 2 \\text{ or } x = 3``,
``\\pm 3``), an answer may write the same set as ``x = 2 or x = 3``, ``2 and 3``, ``\\pm 3``,
``1 \\pm 2`` or one box per solution. :func:`solution_list` rewrites all of these as the plain
list ``a, b`` (names dropped, ``\\pm`` expanded), which is then compared as a set: the full set
passes however it is written, and a hedge that adds a wrong value (``2 or 3 or 4``) or drops one
fails. Where the reference is one value, nothing here applies and ``or``/``\\pm`` stay hedges.
"""

from __future__ import annotations

import re

from graders.math.relations import is_name
from graders.math.structure import collection_kind

__all__ = ["is_solution_list", "solution_list"]

_SEPARATOR = re.compile(
    r"\\text\s*\{\s*(?:or|and|,\s*or|,\s*and)\s*\}|(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])"
    r"|\\(?:lor|vee|quad|qquad)(?![A-Za-z])|;"
)
_PM = re.compile(r"\\pm(?![A-Za-z])|\u00b1|\\mp(?![A-Za-z])|\u2213")
_MARK = "\x00"


def _split_top(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _value(item: str) -> str | None:
    """``x = 2`` -> ``2``; ``2`` -> ``2``; an equation without a name -> None."""
    sides = _split_top(item, "=")
    if len(sides) == 1:
        return item.strip() or None
    if len(sides) == 2 and is_name(sides[0]) and sides[1]:
        return sides[1]
    if len(sides) == 2 and is_name(sides[1]) and sides[0]:
        return sides[0]
    return None


def _expand_pm(value: str) -> list[str] | None:
    """``\\pm 3`` -> ``3, -3``; ``1 \\pm \\sqrt2`` -> ``1 + \\sqrt2, 1 - \\sqrt2``; one ``\\pm``
    at the top level only."""
    marks = [m for m in _PM.finditer(value)]
    if not marks:
        return [value]
    if len(marks) > 1:
        return None
    m = marks[0]
    head, tail = value[: m.start()].strip(), value[m.end() :].strip()
    depth = sum(head.count(ch) for ch in "([{") - sum(head.count(ch) for ch in ")]}")
    if not tail or depth != 0:
        return None
    if not head:
        return [tail, f"-({tail})"]
    return [f"{head} + {tail}", f"{head} - ({tail})"]


def solution_list(text: str) -> str | None:
    """``text`` as the plain list ``a, b`` when it lists several solutions in one of the ways of
    the module doc; None when it is not such a list (or an item states no value)."""
    if _SEPARATOR.search(text) is None and _PM.search(text) is None:
        return None
    marked = _SEPARATOR.sub(_MARK, text)
    items: list[str] = []
    for chunk in _split_top(marked, _MARK):
        for item in _split_top(chunk, ","):
            if not item:
                continue
            value = _value(item)
            if value is None:
                return None
            expanded = _expand_pm(value)
            if expanded is None:
                return None
            items.extend(expanded)
    return ", ".join(items) if len(items) >= 2 else None


def is_solution_list(text: str) -> bool:
    """Whether the reference ``text`` lists several solutions (a list, a set, ``or``, ``\\pm``)."""
    return solution_list(text) is not None or collection_kind(text) in ("list", "set")
