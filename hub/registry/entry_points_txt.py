"""Reading a wheel's ``entry_points.txt`` one way only: the plain subset every reader agrees on.

verihub, pip and ``importlib.metadata`` read a wheel's entry points with different parsers:
``configparser`` joins indented lines to the value above and skips ``;`` comments,
``importlib.metadata`` strips every line, splits on every Unicode line break and keeps repeated
groups and names. A file in the gap could show verihub one target and Python another, so
:func:`parse_entry_points` accepts only what all of them read alike and refuses everything else:

- UTF-8 without a byte-order mark; printable ASCII and line ends only (``\\r\\n`` counts as one);
- no indented line (a continuation for one reader, a new entry for another), no ``;`` comment,
  ``#`` comments only at the start of a line;
- ``[group]`` headers of plain dotted names, each group once, also when compared ignoring case;
- ``name = module.path:attr.path`` entries under a header (no extras, no spaces inside the
  target), each name once per group, also when compared as normalised names (case, ``-_.``).
"""

from __future__ import annotations

import re

__all__ = ["EntryPointsError", "parse_entry_points"]

_GROUP = re.compile(r"[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*")
_NAME = re.compile(r"[A-Za-z0-9_]+(?:[.+-][A-Za-z0-9_]+)*")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_TARGET = re.compile(rf"{_DOTTED}(?::{_DOTTED})?")
_PRINTABLE = re.compile(r"[\x20-\x7e\n]*")


class EntryPointsError(ValueError):
    """``entry_points.txt`` is outside the subset every reader reads alike."""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_entry_points(data: bytes) -> dict[str, dict[str, str]]:
    """``{group: {name: target}}`` of an ``entry_points.txt``; raise :class:`EntryPointsError`
    (saying which line) for anything outside the subset described in the module docstring."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise EntryPointsError("it starts with a byte-order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryPointsError("it is not UTF-8") from exc
    text = text.replace("\r\n", "\n")
    if not _PRINTABLE.fullmatch(text):
        bad = next(c for c in text if not _PRINTABLE.fullmatch(c))
        raise EntryPointsError(f"it holds the character {bad!r} (only printable ASCII is read alike)")
    groups: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        where = f"line {number} ({line[:60]!r})"
        if not line.strip() or line.startswith("#"):
            continue
        if line != line.strip():
            raise EntryPointsError(f"{where} is indented or has trailing spaces")
        if line.startswith(";"):
            raise EntryPointsError(f"{where} is a ';' comment, which not every reader skips")
        if line.startswith("["):
            group = line[1:-1] if line.endswith("]") else ""
            if not _GROUP.fullmatch(group):
                raise EntryPointsError(f"{where} is not a [group] header of a plain dotted name")
            if any(g.lower() == group.lower() for g in groups):
                raise EntryPointsError(f"{where} repeats the group {group!r}")
            current = groups[group] = {}
            continue
        name, sep, target = (part.strip() for part in line.partition("="))
        if current is None:
            raise EntryPointsError(f"{where} comes before any [group] header")
        if not sep or not _NAME.fullmatch(name) or not _TARGET.fullmatch(target):
            raise EntryPointsError(f"{where} is not 'name = module:attribute'")
        if any(_normal(n) == _normal(name) for n in current):
            raise EntryPointsError(f"{where} repeats the name {name!r} in its group")
        current[name] = target
    return groups
