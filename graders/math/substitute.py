"""Checking by substitution: any root of an equation, or an identity in its variables.

Used by the ``root`` and ``identity`` modes (:data:`graders.math.options.CheckMode`). The
objects come from the LaTeX grammar (:func:`graders.math.parse.latex_objects`); nothing is
parsed from text here.
"""

from __future__ import annotations

import random
from typing import Any

import sympy

__all__ = ["is_identity", "is_root"]

_TOL = 1e-9


def _first_sympy(objects: tuple[Any, ...]) -> Any | None:
    for obj in objects:
        if isinstance(obj, (sympy.Basic, sympy.MatrixBase)):
            return obj
    return None


def _is_zero(value: Any) -> bool:
    value = sympy.nsimplify(value) if isinstance(value, sympy.Float) else value
    try:
        if sympy.simplify(value) == 0:
            return True
        number = complex(sympy.N(value, 30))
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    return abs(number) < _TOL


def _values(pred: Any, var: sympy.Symbol) -> list[Any] | None:
    """The values an answer proposes: ``3``, ``x = 3``, ``\\{1, 2\\}``; None when not values."""
    items = list(pred.args) if isinstance(pred, sympy.FiniteSet) else [pred]
    out: list[Any] = []
    for item in items:
        if isinstance(item, sympy.Eq):
            if item.lhs == var or (isinstance(item.lhs, sympy.Symbol) and item.lhs.name == var.name):
                item = item.rhs
            else:
                return None
        if not isinstance(item, sympy.Expr) or item.free_symbols:
            return None
        out.append(item)
    return out or None


def is_root(reference: tuple[Any, ...], answer: tuple[Any, ...]) -> bool | None:
    """True when every value the answer gives satisfies the reference equation.

    None when the reference is not an equation (or expression) in exactly one variable.
    """
    ref = _first_sympy(reference)
    pred = _first_sympy(answer)
    if ref is None:
        return None
    expr = ref.lhs - ref.rhs if isinstance(ref, sympy.Eq) else ref
    if not isinstance(expr, sympy.Expr) or len(expr.free_symbols) != 1:
        return None
    (var,) = expr.free_symbols
    if pred is None:
        return False
    values = _values(pred, var)
    if values is None:
        return False
    return all(_is_zero(expr.subs(var, value)) for value in values)


def is_identity(reference: tuple[Any, ...], answer: tuple[Any, ...], *, points: int = 6) -> bool:
    """True when the answer equals the reference for all values of the variables.

    Checked symbolically, then at ``points`` seeded random points (robust where ``simplify``
    gives up). The answer may not introduce variables the reference lacks.
    """
    ref = _first_sympy(reference)
    pred = _first_sympy(answer)
    if not isinstance(ref, sympy.Expr) or not isinstance(pred, sympy.Expr):
        return False
    if not pred.free_symbols <= ref.free_symbols:
        return False
    diff = ref - pred
    try:
        if sympy.simplify(diff) == 0:
            return True
    except Exception:
        pass
    symbols = sorted(ref.free_symbols, key=lambda s: s.name)
    rng = random.Random(20240601)
    checked = 0
    for _ in range(points):
        point = {s: sympy.Rational(rng.randint(-97, 97), rng.randint(1, 13)) for s in symbols}
        try:
            value = complex(sympy.N(diff.subs(point), 30))
            scale = max(1.0, abs(complex(sympy.N(ref.subs(point), 30))))
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        if abs(value) > _TOL * scale:
            return False
        checked += 1
    return checked * 2 >= points
