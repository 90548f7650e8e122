"""The strict option: reject an unevaluated answer where a value is asked for.

``\\boxed{37\\cdot43}`` for 1591, ``100+1``, ``2^{10}``, a ``\\sum`` or a ``\\binom`` are
mathematically equal to the value but leave the work undone; a reward that accepts them teaches
a model to stop early. The test is syntactic (nothing is evaluated) and relative to the
reference: an answer may use a construct the reference itself uses, and may not be much longer
than the reference (more than twice its tokens plus four: a copied "simplify ..." expression).
"""

from __future__ import annotations

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
_SIZE_FACTOR = 2
_SIZE_SLACK = 4


def _size(text: str) -> int:
    """A rough count of the tokens of a LaTeX answer (commands, numbers, letters, operators)."""
    return len(_TOKEN.findall(text))


def unevaluated_reason(answer: Answer, reference: Answer) -> str | None:
    """Why ``answer`` is unevaluated relative to ``reference``, or None when it is a value."""
    big = _BIG_OPERATORS.search(answer.text)
    if big is not None and _BIG_OPERATORS.search(reference.text) is None:
        return f"unevaluated: the answer contains {big.group(0).strip()!r}; give the value"
    if reference.number is not None:
        if answer.number is None:
            return "unevaluated: a number is asked for and the answer is not a literal number"
        return None
    for pattern in (_INTEGER_ARITHMETIC, _INTEGER_POWER):
        found = pattern.search(answer.text)
        if found is not None and pattern.search(reference.text) is None:
            return f"unevaluated: the answer contains the arithmetic {found.group(0)!r}; give the value"
    if _size(answer.text) > _SIZE_FACTOR * _size(reference.text) + _SIZE_SLACK:
        return "unsimplified: the answer is far longer than the expected form; simplify it"
    return None
