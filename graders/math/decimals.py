"""Decimal literals inside an expression, rewritten as the exact rationals they write.

A bare decimal answer is compared as the rational it writes (``1.4142`` is not ``\\sqrt2``; see
:func:`graders.math.compare._decimal_equals_exact`). Math-Verify compares sympy objects with a
numeric tolerance, so the same decimal wrapped in any structure (``\\pm 1.4142``, a tuple, an
interval, a set, a vector or matrix, ``-(-1.4142)``) would pass. :func:`exact_decimals` rewrites
every decimal literal of a LaTeX answer as ``{\\frac{p}{10^k}}`` before parsing, so no structure
hides an approximation: ``(1.5, 2)`` still equals ``(\\frac32, 2)``, ``(1.4142, 3)`` does not
equal ``(\\sqrt2, 3)``. Math-Verify still evaluates some unevaluated forms numerically
(``1.4142 + 0``), so :func:`approximates` confirms a pass leaf by leaf at 60 digits.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

__all__ = ["approximates", "exact_decimals", "has_decimal"]

# a decimal literal: digits, a point, digits; not part of a longer dotted run (1.2.3) and not a
# thousands-grouped number (1,234.5 is read by the literal-number path before this is used)
_DECIMAL = re.compile(r"(?<![\d.,])(\d{1,40})\.(\d{1,40})(?![\d.])")


def has_decimal(text: str) -> bool:
    """Whether ``text`` holds a decimal literal."""
    return _DECIMAL.search(text) is not None


def _exact(match: re.Match[str]) -> str:
    whole, frac = match.group(1), match.group(2)
    numerator = int(whole + frac)
    return f"{{\\frac{{{numerator}}}{{{10 ** len(frac)}}}}}"


def exact_decimals(text: str) -> str:
    """``text`` with every decimal literal written as an exact fraction (see module doc)."""
    return _DECIMAL.sub(_exact, text) if "." in text else text


def _leaves(obj: Any) -> list[Any] | None:
    """The numeric leaves of a parsed answer (tuple/set/interval/matrix entries, equation
    sides), or None when some leaf has free symbols (then no exact check is possible)."""
    if isinstance(obj, sympy.MatrixBase):
        items: list[Any] = list(obj)
    elif isinstance(obj, (sympy.Tuple, sympy.FiniteSet)):
        items = list(obj.args)
    elif isinstance(obj, sympy.Interval):
        items = [obj.start, obj.end]
    elif isinstance(obj, sympy.core.relational.Relational):
        items = [obj.lhs, obj.rhs]
    elif isinstance(obj, sympy.Expr):
        if obj.free_symbols:
            return None
        return [obj]
    else:
        return None
    out: list[Any] = []
    for item in items:
        sub = _leaves(item)
        if sub is None:
            return None
        out.extend(sub)
    return out


def _same_value(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if a.is_infinite or b.is_infinite:
        return False
    try:
        difference = complex(sympy.N(a - b, 60))
        scale = max(1.0, abs(complex(sympy.N(b, 20))))
    except (TypeError, ValueError, ZeroDivisionError, AttributeError):
        return False
    return abs(difference) < 1e-45 * scale


def approximates(reference: Any, answer: Any) -> bool:
    """Whether some numeric leaf of ``answer`` matches no leaf of ``reference`` exactly (a
    decimal approximation that a tolerant comparison let through). False when either side has
    free symbols or a leaf count that differs (those are decided elsewhere)."""
    ref_leaves, ans_leaves = _leaves(reference), _leaves(answer)
    if ref_leaves is None or ans_leaves is None or not ans_leaves:
        return False
    remaining = list(ref_leaves)
    for leaf in ans_leaves:
        match = next((i for i, ref in enumerate(remaining) if _same_value(ref, leaf)), None)
        if match is None:
            if any(_same_value(ref, leaf) for ref in ref_leaves):
                continue  # a repeated value (an interval [a, a], a matrix of equal entries)
            return True
        remaining.pop(match)
    return False
