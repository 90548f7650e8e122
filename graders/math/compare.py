"""Equivalence of one answer with the reference; the first check that applies decides:

1. a choice-letter reference wants the same letter; a ``\\text{}`` reference wants the same words;
2. answers that hedge (``\\pm``, ``or``) where the reference does not are wrong;
3. two literal numbers compare exactly (rationals), or with a relative tolerance when either is a
   decimal, and a percentage may stand for its value or its hundredth; the same expression
   (whitespace aside) is equal; tuples, intervals, sets and lists of literal numbers are compared
   element-wise without sympy (:mod:`graders.math.structure`);
4. anything else goes through the LaTeX grammar and Math-Verify's comparison (symbolic and
   numeric equality, sets unordered, tuples ordered, interval ends, matrices, equations,
   inequalities), after refusing a set of several values where the reference is one value and
   after a fast numeric refutation (:mod:`graders.math.refute`);
5. in ``root``/``identity`` mode, substitution (:mod:`graders.math.substitute`) decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import sympy

from graders.math.decimals import approximates, exact_decimals, has_decimal
from graders.math.normalize import LiteralNumber
from graders.math.options import MathOptions
from graders.math.parse import Answer, latex_objects, read_answer, read_reference, reference_objects
from graders.math.refute import clearly_different
from graders.math.screen import TOO_COSTLY, screen_answer
from graders.math.structure import compare_structures
from graders.math.substitute import is_identity, is_root

__all__ = ["Comparison", "ReferenceUnreadable", "compare"]

# several values at once (\pm, "or"), or an approximation (\approx): not one committed answer
_HEDGE = re.compile(
    r"\\pm|\\mp|\u00b1|\\lor(?![a-z])|\\vee(?![a-z])|(?:^|[\s{}$(])or(?:$|[\s{}$)])|\\text\s*\{\s*or\s*\}"
    r"|\\(?:approx|thickapprox|simeq|doteq|sim)(?![a-z])|\u2248"
)
_WHITESPACE = re.compile(r"\s+")
_BAD_NUMERAL = re.compile(r"^\d+\s*_\s*\{?\s*\d+\s*\}?$")  # read_based refused it: invalid digits
_SET_LIKE = (sympy.Set, sympy.Tuple, sympy.MatrixBase, sympy.core.relational.Relational, sympy.And, sympy.Or)


class ReferenceUnreadable(ValueError):
    """The reference answer itself could not be read: a data problem, not a wrong answer."""


@dataclass(frozen=True)
class Comparison:
    """Outcome of :func:`compare`."""

    outcome: Literal["equal", "different", "unparseable"]
    reason: str


def _numbers_equal(a: LiteralNumber, b: LiteralNumber, rel_tol: float) -> bool:
    """Literal numbers are the rationals they write: ``0.5`` is ``\\frac12``, ``17.99999`` is
    not 18. A percent sign is a unit (``25\\%`` is 25: datasets write a percentage answer as
    the bare number), so one answer never stands for two values a factor of 100 apart.
    ``rel_tol`` > 0 (opt-in) accepts a nearby value when either side is a decimal."""
    if a.value == b.value:
        return True
    if rel_tol > 0 and (a.inexact or b.inexact):
        return abs(a.value - b.value) <= Fraction(rel_tol) * max(abs(a.value), abs(b.value))
    return False


def _compare_based(reference: Answer, answer: Answer) -> Comparison:
    """Numerals in a base: same digits and base; a bare numeral stands for the asked base."""

    def key(a: Answer, default_base: int) -> tuple[str, int] | None:
        if a.based is not None:
            return a.based.digits, a.based.base
        if a.number is not None and a.number.value.denominator == 1 and a.number.value >= 0:
            return str(a.number.value.numerator), default_base
        return None

    ref_base = reference.based.base if reference.based is not None else 10
    ref_key, ans_key = key(reference, 10), key(answer, ref_base)
    same = ref_key is not None and ref_key == ans_key
    return Comparison("equal" if same else "different", "numeral in a base")


def _first_sympy(objects: tuple[Any, ...]) -> Any | None:
    return next((o for o in objects if isinstance(o, (sympy.Basic, sympy.MatrixBase))), None)


def _reference_objects(reference: Answer) -> tuple[Any, ...]:
    objects = reference_objects(reference.text)
    if _first_sympy(objects) is None:
        raise ReferenceUnreadable(f"the reference answer {reference.raw!r} could not be parsed")
    return objects


def compare(reference: Answer, answer: Answer, options: MathOptions) -> Comparison:
    """Whether ``answer`` is equivalent to ``reference`` under ``options``."""
    if not answer.text:
        return Comparison("unparseable", "empty answer")
    if reference.letter is not None and reference.number is None:
        if answer.letter is None:
            return Comparison("different", f"expected a choice letter, got {answer.text!r}")
        same = answer.letter == reference.letter
        return Comparison("equal" if same else "different", f"choice {answer.letter}")
    if reference.is_text_answer and reference.words is not None:
        same = answer.words == reference.words
        return Comparison("equal" if same else "different", "word answer")
    if reference.based is not None or answer.based is not None:
        return _compare_based(reference, answer)
    if _BAD_NUMERAL.match(answer.text):
        return Comparison("unparseable", "digits that do not exist in the base of the subscript")
    if _HEDGE.search(answer.text) and not _HEDGE.search(reference.text):
        return Comparison("different", "the answer hedges between several values (\u00b1 / or)")
    if options.mode == "equivalent":
        if reference.number is not None and answer.number is not None:
            same = _numbers_equal(reference.number, answer.number, options.rel_tol)
            return Comparison("equal" if same else "different", "numeric comparison")
        if _WHITESPACE.sub("", reference.text) == _WHITESPACE.sub("", answer.text):
            return Comparison("equal", "same expression")
        decided = compare_structures(
            reference.text, answer.text, lambda a, b: _numbers_equal(a, b, options.rel_tol)
        )
        if decided is not None:
            return Comparison("equal" if decided else "different", "tuple/interval/set of numbers")
        if answer.number is not None and answer.number.inexact and options.rel_tol == 0:
            exact = _decimal_equals_exact(reference, answer.number)
            if exact is not None:
                return Comparison("equal" if exact else "different", "a decimal against an exact value")
    return _compare_objects(reference, answer, options)


def _decimal_equals_exact(reference: Answer, number: LiteralNumber) -> bool | None:
    """A decimal answer is the rational it writes: ``0.8660254`` is not ``\\frac{\\sqrt3}{2}``
    (and ``3.14`` is not ``\\pi``). None when the reference is not a closed-form number."""
    ref = _first_sympy(_reference_objects(reference))
    if not isinstance(ref, sympy.Expr) or ref.free_symbols or isinstance(ref, sympy.Tuple):
        return None
    value = sympy.Rational(number.value.numerator, number.value.denominator)
    if ref.is_Rational:
        return bool(ref == value)
    try:
        difference = complex(sympy.N(ref - value, 60))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return abs(difference) < 1e-50 * max(1.0, abs(complex(value)))


def _compare_objects(reference: Answer, answer: Answer, options: MathOptions) -> Comparison:
    from math_verify import verify

    refused = screen_answer(answer.text)
    if refused is not None:
        return Comparison("different", f"{TOO_COSTLY}: refused before evaluation: {refused}")
    decimals = options.rel_tol == 0 and options.mode == "equivalent" and has_decimal(answer.text)
    if decimals:
        # a decimal is the rational it writes, in any structure (see graders.math.decimals)
        reference = read_reference(exact_decimals(reference.text))
        answer = read_answer(exact_decimals(answer.text))
    ref_objects = _reference_objects(reference)
    objects = latex_objects(answer.text)
    pred = _first_sympy(objects)
    if not objects or (pred is None and _first_sympy(ref_objects) is not None):
        return Comparison("unparseable", f"could not read {answer.text[:80]!r} as mathematics")
    if options.mode == "root":
        ok = is_root(ref_objects, objects)
        if ok is None:
            raise ReferenceUnreadable("mode='root' needs a reference equation in one variable")
        return Comparison("equal" if ok else "different", "substitution into the reference equation")
    if options.mode == "identity":
        ok = is_identity(ref_objects, objects)
        return Comparison("equal" if ok else "different", "identity by substitution")
    ref = _first_sympy(ref_objects)
    if isinstance(pred, sympy.FiniteSet) and len(pred) > 1 and not isinstance(ref, _SET_LIKE):
        return Comparison("different", "the answer gives several values where one is asked for")
    if ref is not None and pred is not None and type(ref) is type(pred) and clearly_different(ref, pred):
        return Comparison("different", "numerically different")
    same = verify(list(ref_objects), list(objects), timeout_seconds=None, strict=True)
    if same and decimals and ref is not None and pred is not None and approximates(ref, pred):
        return Comparison("different", "a decimal approximation of an exact value")
    return Comparison("equal" if same else "different", "symbolic comparison")
