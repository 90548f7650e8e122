"""Fast refutation: show two parsed answers differ by evaluating them, before slow symbolic work.

Math-Verify's comparison simplifies symbolically, which costs 50-500 ms on tuples of surds or
polynomials. Most wrong answers differ *numerically*, which a few evaluations show in about a
millisecond. :func:`clearly_different` only ever answers "different" when the numbers disagree
by far more than any rounding tolerance (relative 1e-3); otherwise it says nothing (False) and
the full comparison decides. Same-kind pairs only: expressions, tuples, finite sets, intervals.
"""

from __future__ import annotations

import random
from typing import Any

import sympy

__all__ = ["clearly_different"]

_REL = 1e-3
_POINTS = 2


def _value(expr: sympy.Expr, point: dict[Any, Any]) -> complex | None:
    try:
        value = complex(sympy.N(expr.subs(point) if point else expr, 20))
    except (TypeError, ValueError, ZeroDivisionError, AttributeError):
        return None
    if value != value or abs(value) == float("inf"):  # nan / inf: no evidence either way
        return None
    return value


def _exprs_differ(a: sympy.Expr, b: sympy.Expr) -> bool:
    if a.free_symbols != b.free_symbols:
        return False  # variable naming is the full comparison's business
    symbols = sorted(a.free_symbols, key=lambda s: str(s))
    rng = random.Random(7)
    for _ in range(_POINTS if symbols else 1):
        point = {s: sympy.Rational(rng.randint(11, 97), rng.randint(3, 13)) for s in symbols}
        x, y = _value(a, point), _value(b, point)
        if x is None or y is None:
            return False
        if abs(x - y) > _REL * max(1.0, abs(x), abs(y)):
            return True
    return False


def clearly_different(a: Any, b: Any) -> bool:
    """True only when ``a`` and ``b`` (sympy objects of the same kind) certainly differ."""
    if isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr) and not isinstance(a, sympy.Tuple):
        return _exprs_differ(a, b)
    if isinstance(a, sympy.Tuple) and isinstance(b, sympy.Tuple):
        if len(a) != len(b):
            return True
        return any(clearly_different(x, y) for x, y in zip(a.args, b.args, strict=True))
    if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
        if not all(isinstance(x, sympy.Expr) for x in (*a.args, *b.args)):
            return False
        return any(all(clearly_different(x, y) for y in b.args) for x in a.args) or any(
            all(clearly_different(y, x) for x in a.args) for y in b.args
        )
    if isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval):
        if (a.left_open, a.right_open) != (b.left_open, b.right_open):
            return True
        return clearly_different(a.start, b.start) or clearly_different(a.end, b.end)
    return False
