"""Equations and inequalities in an answer, read as the value or interval they state.

Math-Verify compares only the right-hand side of an equation, so ``2 = 1591`` would pass for
1591. Here, where the reference is a value: ``x = 5``, ``f(2) = 5``, ``(x, y) = (1, 2)`` and
``5 = x`` state a value (the side that is not a name); an equation neither side of which is a
name (``2 = 1591``, ``2x = 6``), or a chained one (``a = 1592 = 1591``), states none and fails; a
comma list (``x = 1, x = -2``) is read item by item. Where the reference is an interval, a
one-variable inequality (``1 \\le x < 2``) is read as its interval, and the other way round.

Everything here is string work over top-level text (brackets and braces respected).
"""

from __future__ import annotations

import re

__all__ = ["as_interval", "stated_names", "state_value", "top_level_count"]

_GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi"
    "|rho|sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Sigma|Phi|Psi|Omega"
)
_ONE_NAME = (
    r"(?:(?:m\s*)?\\angle\s*)?(?:\\(?:overline|mathbf|vec|bar|hat)\s*\{\s*[A-Za-z]{1,3}\s*\}|[A-Za-z]{1,3}"
    r"|\\(?:" + _GREEK + r")(?![A-Za-z]))"
    r"(?:_\s*(?:\{\s*[A-Za-z0-9]{1,3}\s*\}|[A-Za-z0-9]))?'{0,2}"
    r"(?:\s*\(\s*[A-Za-z0-9]{1,3}(?:\s*,\s*[A-Za-z0-9]{1,3}){0,3}\s*\))?"
)
_NAME = re.compile(rf"^(?:{_ONE_NAME}|\(\s*{_ONE_NAME}(?:\s*,\s*{_ONE_NAME}){{1,5}}\s*\))$")
_LESS = r"<|\\lt(?![a-z])|\\leq?(?![a-z])|\\leqslant|\u2264"
_GREATER = r">|\\gt(?![a-z])|\\geq?(?![a-z])|\\geqslant|\u2265"
_RELATION = re.compile(rf"({_LESS}|{_GREATER})")
# "or" between two conditions: x < 2 or x > 3, \\lor, \\vee, \\text{ or }, the logical-or sign
_UNION = re.compile(
    r"[ \t]*(?:\\text[ \t]*\{[ \t]*or[ \t]*\}|\\lor(?![A-Za-z])|\\vee(?![A-Za-z])|\u2228"
    r"|(?<![A-Za-z\\])or(?![A-Za-z]))[ \t]*"
)
_STRICT_OPS = frozenset({"<", ">", "\\lt", "\\gt"})
# names combined by + - and products (``m + n``, ``a + b + c``, ``100a + 10b + c``, ``mn``)
_NAME_SUM = re.compile(r"^\s*\d*\s*[A-Za-z](?:\s*[+\-]?\s*(?:\\cdot\s*)?\d*\s*[A-Za-z])+\s*$")
_LETTER = re.compile(r"(?<![\\A-Za-z])[A-Za-z]")  # a letter that is not part of a \\command


def _depths(text: str) -> list[int]:
    """Bracket depth before each character (``\\{``/``\\}`` and ``\\left``-less brackets)."""
    out: list[int] = []
    depth = 0
    for ch in text:
        if ch in ")]}":
            depth -= 1
        out.append(depth)
        if ch in "([{":
            depth += 1
    return out


def _split_top(text: str, sep: str) -> list[str]:
    depths = _depths(text)
    parts: list[str] = []
    start = 0
    for i, ch in enumerate(text):
        if ch == sep and depths[i] == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def top_level_count(text: str, char: str = "=") -> int:
    """How many ``char`` stand outside every bracket (``\\sum_{k=1}`` has none)."""
    depths = _depths(text)
    return sum(1 for i, ch in enumerate(text) if ch == char and depths[i] == 0)


def is_name(text: str) -> bool:
    """``x``, ``x_1``, ``f(2)``, ``\\theta``, ``AB``, ``(x, y)``: something an answer may name."""
    return _NAME.match(text.strip()) is not None


def state_value(text: str) -> tuple[str | None, str]:
    """``(value, reason)``: the value an answer states once names are dropped; ``value`` is
    None when an equation in it states no value (``reason`` says why). Text without a
    top-level ``=`` comes back unchanged."""
    if top_level_count(text) == 0:
        return text, ""
    values: list[str] = []
    for item in _split_top(text, ","):
        sides = _split_top(item, "=")
        if len(sides) == 1:
            values.append(item)
        elif len(sides) > 2:
            return None, "a chained equation (a = b = c) states no single value"
        elif is_name(sides[0]) and sides[1]:
            values.append(sides[1])
        elif is_name(sides[1]) and sides[0]:
            values.append(sides[0])
        elif _NAME_SUM.match(sides[0]) and sides[1] and not _LETTER.search(sides[1]):
            values.append(sides[1])  # AIME's "m + n = 204": the sum of the asked names
        else:
            return None, "an equation where a value is asked; give the value"
    return ", ".join(values), ""


def stated_names(text: str) -> frozenset[str]:
    """The names that ``name = value`` items of ``text`` give a value to (``x = 5, y = 2`` gives
    ``{x, y}``; ``5`` and ``2x = 6`` give none), without spaces and braces (``x_{1}`` is ``x_1``)."""
    if top_level_count(text) == 0:
        return frozenset()
    names: set[str] = set()
    for item in _split_top(text, ","):
        sides = _split_top(item, "=")
        if len(sides) != 2:
            continue
        for side in sides:
            if is_name(side):
                names.add(re.sub(r"[\s{}]", "", side))
                break
    return frozenset(names)


def _bracket(op: str, *, low: bool) -> str:
    strict = op in _STRICT_OPS
    if low:
        return "(" if strict else "["
    return ")" if strict else "]"


def as_interval(text: str) -> str | None:
    """``x > 2`` -> ``(2, \\infty)``, ``1 \\le x < 2`` -> ``[1, 2)``, and inequalities joined by
    "or" (``x < 2 \\lor x > 3``) -> their union; None for anything else."""
    parts = _UNION.split(text)
    if len(parts) > 1:
        intervals = [_one_interval(part) for part in parts]
        if any(interval is None for interval in intervals):
            return None
        return " \\cup ".join(interval for interval in intervals if interval is not None)
    return _one_interval(text)


def _one_interval(text: str) -> str | None:
    if top_level_count(text) or top_level_count(text, ","):
        return None
    parts = [p.strip() for p in _RELATION.split(text.strip())]
    if len(parts) not in (3, 5) or not all(parts[::2]):
        return None
    terms, ops = parts[::2], parts[1::2]
    less = [re.fullmatch(_LESS, op) is not None for op in ops]
    if len(set(less)) != 1:
        return None
    if not less[0]:  # a > x > b is b < x < a
        terms, ops = terms[::-1], ops[::-1]
    if len(terms) == 3:
        low, name, high = terms
        if not is_name(name) or is_name(low) or is_name(high):
            return None
        return f"{_bracket(ops[0], low=True)}{low}, {high}{_bracket(ops[1], low=False)}"
    left, right = terms
    if is_name(left) and not is_name(right):
        return f"(-\\infty, {right}{_bracket(ops[0], low=False)}"
    if is_name(right) and not is_name(left):
        return f"{_bracket(ops[0], low=True)}{left}, \\infty)"
    return None
