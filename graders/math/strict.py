"""The strict option: the answer must be in a final, simplified form comparable to the reference's.

``\\boxed{37\\cdot43}`` for 1591, ``100+1``, ``2^{10}``, a ``\\sum`` or a ``\\binom`` are
mathematically equal to the value but leave the work undone; a reward that accepts them teaches
a model to stop early. Likewise unsimplified forms: a fraction not in lowest terms
(``\\frac{2}{4}``, ``\\frac{3182}{2}``, ``\\frac{4\\sqrt2}{2}``), a radical with a square factor
(``\\sqrt{8}``, ``\\sqrt{16}``), and a function the reference's form does not use
(``\\sin(\\pi/3)`` for ``\\frac{\\sqrt3}{2}``, ``\\log``, ``\\sqrt`` where the reference has none).

The test is syntactic (nothing is evaluated) and relative to the reference: an answer may use a
construct the reference itself uses, and may not be much longer than the reference (more than
twice its tokens plus four: a copied "simplify ..." expression).
"""

from __future__ import annotations

import math
import re

from graders.math.parse import Answer

__all__ = ["unevaluated_reason"]

_BIG_OPERATORS = re.compile(
    r"\\(?:sum|prod|int|iint|oint|lim|binom|dbinom|tbinom|choose|cdots|ldots|dots|operatorname)(?![a-zA-Z])"
    r"|\d\s*!|\}\s*!|\)\s*!"
)
_INTEGER_ARITHMETIC = re.compile(
    r"(?<![\w.^{])\d+\s*(?:[-+*/\u00d7\u00f7]|\\cdot|\\times|\\div)\s*\d+"
    r"(?![\w.]|\s*\\(?:sqrt|pi|frac)|\s*[a-zA-Z\\^(])"
)
_INTEGER_POWER = re.compile(r"(?<![\w.])\d+\s*\^\s*\{?\s*\d+")
_TOKEN = re.compile(r"\\[A-Za-z]+|\d+(?:\.\d+)?|[A-Za-z]|[-+*/^=<>]")
_FUNCTIONS = re.compile(
    r"\\(?:arcsin|arccos|arctan|sinh|cosh|tanh|sin|cos|tan|cot|sec|csc|log|ln|lg|exp|sqrt)(?![a-zA-Z])"
)
# \frac{6}{4}, \frac{4\sqrt{2}}{2}, \frac{2x}{4}, 6/4: an integer (times one factor) over an integer
_NUMERIC_FRACTION = re.compile(
    r"\\frac\s*(?:\{\s*(?P<n1>\d+)\s*(?P<f1>\\sqrt\s*(?:\[\d+\])?\s*\{[^{}]*\}|\\pi|[A-Za-z])?\s*\}|(?P<n2>\d))"
    r"\s*(?:\{\s*(?P<d1>\d+)\s*\}|(?P<d2>\d))"
    r"|(?<![\w.^])(?P<n3>\d+)\s*/\s*(?P<d3>\d+)(?![\w.])"
)
_RADICAL = re.compile(r"\\sqrt\s*(?:\[\s*(?P<k>\d)\s*\])?\s*(?:\{\s*(?P<n1>\d+)\s*\}|(?P<n2>\d))")
_RADICAND_LIMIT = 10**8
_SIZE_FACTOR = 2
_SIZE_SLACK = 4


def _size(text: str) -> int:
    """A rough count of the tokens of a LaTeX answer (commands, numbers, letters, operators)."""
    return len(_TOKEN.findall(text))


def _unreduced_fraction(text: str) -> str | None:
    for m in _NUMERIC_FRACTION.finditer(text):
        num = int(m.group("n1") or m.group("n2") or m.group("n3"))
        den = int(m.group("d1") or m.group("d2") or m.group("d3"))
        if den == 1 or (den > 1 and math.gcd(num, den) > 1):
            return m.group(0)
    return None


def _has_power_factor(n: int, k: int) -> bool:
    """Whether ``n`` (small) is divisible by the ``k``-th power of an integer > 1."""
    p = 2
    while p**k <= n:
        if n % p**k == 0:
            return True
        p += 1
    return False


def _unsimplified_radical(text: str) -> str | None:
    for m in _RADICAL.finditer(text):
        n = int(m.group("n1") or m.group("n2"))
        k = int(m.group("k") or 2)
        if k >= 2 and (n <= 1 or (n < _RADICAND_LIMIT and _has_power_factor(n, k))):
            return m.group(0)
    return None


def _unsimplified_reason(answer: Answer, reference: Answer) -> str | None:
    for finder in (_unreduced_fraction, _unsimplified_radical):
        found = finder(answer.text)
        if found is not None and finder(reference.text) is None:
            return f"unsimplified: {found!r} can be simplified; give the simplest form"
    ref_functions = set(_FUNCTIONS.findall(reference.text))
    for function in _FUNCTIONS.findall(answer.text):
        if function not in ref_functions:
            return f"unevaluated: the answer uses {function} where the expected form does not; give the value"
    return None


def unevaluated_reason(answer: Answer, reference: Answer) -> str | None:
    """Why ``answer`` is unevaluated or unsimplified relative to ``reference``, or None."""
    big = _BIG_OPERATORS.search(answer.text)
    if big is not None and _BIG_OPERATORS.search(reference.text) is None:
        return f"unevaluated: the answer contains {big.group(0).strip()!r}; give the value"
    if reference.number is not None:
        if answer.number is None:
            return "unevaluated: a number is asked for and the answer is not a literal number"
        return _unreduced_fraction(answer.text) and "unsimplified: a fraction not in lowest terms"
    unsimplified = _unsimplified_reason(answer, reference)
    if unsimplified is not None:
        return unsimplified
    for pattern in (_INTEGER_ARITHMETIC, _INTEGER_POWER):
        found = pattern.search(answer.text)
        if found is not None and pattern.search(reference.text) is None:
            return f"unevaluated: the answer contains the arithmetic {found.group(0)!r}; give the value"
    if _size(answer.text) > _SIZE_FACTOR * _size(reference.text) + _SIZE_SLACK:
        return "unsimplified: the answer is far longer than the expected form; simplify it"
    return None
