"""Tuples, intervals, sets and answer lists of literal numbers, compared without sympy.

``(8, -2)``, ``[2, 5)``, ``\\{1, 2\\}``, ``1, -2`` and ``(-\\infty, 0]`` are split at their
top-level commas; when every element is a literal number (or ``\\pm\\infty``) the comparison is
decided here: tuples and intervals element by element with their brackets, sets and bare lists
(MATH's "enter all solutions, separated by commas") in any order. Anything else returns None and
is left to the LaTeX grammar and sympy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from graders.math.normalize import LiteralNumber, read_number

__all__ = ["Bracketed", "collection_kind", "compare_structures", "kind_mismatch", "split_structure"]

_INFINITY = re.compile(r"^([+-]?)\s*\\infty$")
_OPENERS = {"(": "()", "[": "[]", "\\{": "{}"}


@dataclass(frozen=True)
class Bracketed:
    """An answer split at its top-level commas. ``kind``: ``ordered`` (tuple/interval, with its
    ``brackets`` such as ``"[)"``) or ``unordered`` (a set or a bare list)."""

    kind: str
    brackets: str
    items: tuple[str, ...]


def _split_commas(body: str) -> list[str] | None:
    items: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and body[i + 1 : i + 2] in ("{", "}"):
            depth += 1 if body[i + 1] == "{" else -1
            i += 2
            continue
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
        i += 1
    if depth != 0:
        return None
    items.append(body[start:].strip())
    return items if all(items) else None


def split_structure(text: str) -> Bracketed | None:
    """``text`` as a bracketed or bare list of at least two items, or None."""
    t = text.strip()
    for opener, pair in _OPENERS.items():
        if t.startswith(opener):
            closer_ok = t.endswith("\\}") if opener == "\\{" else t[-1:] in ")]"
            if not closer_ok:
                return None
            body = t[len(opener) : -2 if opener == "\\{" else -1]
            items = _split_commas(body)
            if items is None or len(items) < 2:
                return None
            if opener == "\\{":
                return Bracketed("unordered", pair, tuple(items))
            return Bracketed("ordered", t[0] + t[-1], tuple(items))
    items = _split_commas(t)
    if items is None or len(items) < 2:
        return None
    return Bracketed("unordered", "", tuple(items))


Element = tuple[str, LiteralNumber | None]


def _element(text: str) -> Element | None:
    m = _INFINITY.match(text)
    if m is not None:
        return ("-inf" if m.group(1) == "-" else "inf", None)
    number = read_number(text)
    if number is None or number.percent:
        return None
    return ("num", number)


def compare_structures(
    reference: str, answer: str, same_number: Callable[[LiteralNumber, LiteralNumber], bool]
) -> bool | None:
    """True/False when both are structures of literal numbers of a comparable kind, else None."""
    ref = split_structure(reference)
    ans = split_structure(answer)
    if ref is None or ans is None:
        return None
    ref_items = [_element(x) for x in ref.items]
    ans_items = [_element(x) for x in ans.items]
    if any(x is None for x in ref_items) or any(x is None for x in ans_items):
        return None
    refs = [x for x in ref_items if x is not None]
    anss = [x for x in ans_items if x is not None]

    def equal(a: Element, b: Element) -> bool:
        if a[0] != b[0]:
            return False
        if a[1] is None or b[1] is None:
            return True
        return same_number(a[1], b[1])

    if ref.kind == "ordered" or ans.kind == "ordered":
        if ref.kind != ans.kind or ref.brackets != ans.brackets:
            return None  # (a, b) vs [a, b]: point vs interval semantics are sympy's call
        return len(refs) == len(anss) and all(equal(a, b) for a, b in zip(refs, anss, strict=True))
    if len(refs) != len(anss):
        # a set with repeated elements ({1, 1, 2}) is sympy's call
        return (
            None if len(set(map(str, refs))) != len(refs) or len(set(map(str, anss))) != len(anss) else False
        )
    remaining = list(anss)
    for a in refs:
        match = next((i for i, b in enumerate(remaining) if equal(a, b)), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def collection_kind(text: str) -> str | None:
    """``set`` (``\\{a, b\\}``), ``list`` (``a, b``), ``tuple`` (``(a, b)``: a point or an open
    interval) or ``interval`` (``[a, b)``, ``[a, b]``...), or None for anything else."""
    found = split_structure(text)
    if found is None or all("=" in item for item in found.items):
        return None  # ``x = 2, y = 3`` names its values: graders.math.restate reads it
    if found.kind == "unordered":
        return "set" if found.brackets == "{}" else "list"
    return "tuple" if found.brackets == "()" else "interval"


_UNORDERED_KINDS = frozenset({"set", "list"})


def kind_mismatch(reference: str, answer: str) -> str | None:
    """Why ``answer`` is a different kind of collection than ``reference``, or None.

    Sets and bare lists (MATH's "all solutions, separated by commas") are one kind; a tuple or
    interval is another: ``\\{-2, 3\\}`` or ``-2, 3`` is not the interval ``(-2, 3)``, and
    ``(2, 3)`` is not the solution list ``2, 3``. Brackets within the ordered kind are Math-Verify's
    call (it keeps ``[2, 3]`` and ``(2, 3)`` apart).
    """
    ref_kind = collection_kind(reference)
    ans_kind = collection_kind(answer)
    if ref_kind is None or ans_kind is None:
        return None
    if (ref_kind in _UNORDERED_KINDS) != (ans_kind in _UNORDERED_KINDS):
        return f"a {ans_kind} where the reference is a {ref_kind}"
    return None
