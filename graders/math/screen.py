"""Cheap limits on an answer before it reaches the LaTeX grammar and sympy.

Real answers are short and shallow (MATH-500's longest is 53 characters, nested 2 deep). Inputs
far outside that (a 900-deep parenthesis nest, a power tower, a 5,000-digit exponent, ``99999!``)
make the grammar or sympy run for seconds or forever; they are refused here in microseconds, and
so are answers whose evaluation cost cannot be bounded (:mod:`graders.math.cost`): the grade is
``incorrect`` with a reason starting ``too_costly:``. The pool's hard timeout stays the real
guarantee; this keeps workers from being killed and restarted for nothing. Only answers are
screened, never the trusted reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graders.grade import TOO_COSTLY
from graders.math.cost import costly_reason

__all__ = ["TOO_COSTLY", "ScreenLimits", "screen_answer"]

_DIGITS = re.compile(r"\d+")
_FACTORIAL = re.compile(r"(\d+)\s*!")


@dataclass(frozen=True)
class ScreenLimits:
    """Limits for answers that go to the grammar (literal numbers never do)."""

    max_chars: int = 400
    max_depth: int = 12
    max_digits: int = 60
    max_tower: int = 2
    max_factorial: int = 1000


def _depth_and_tower(text: str) -> tuple[int, int]:
    """Deepest bracket nesting, and deepest nesting of exponents (``a^{b^{c}}`` is 2)."""
    depth = deepest = 0
    stack: list[bool] = []  # for each open brace: was it an exponent's?
    exponents = tower = 0
    pending_exponent = False
    for ch in text:
        if ch == "^":
            pending_exponent = True
            tower = max(tower, exponents + 1)
            continue
        if ch in "({[":
            depth += 1
            deepest = max(deepest, depth)
            is_exponent = pending_exponent and ch == "{"
            stack.append(is_exponent)
            exponents += is_exponent
        elif ch in ")}]":
            depth -= 1
            if stack and stack.pop():
                exponents -= 1
        pending_exponent = False if not ch.isspace() else pending_exponent
    return deepest, tower


def screen_answer(text: str, limits: ScreenLimits | None = None) -> str | None:
    """Why ``text`` is refused before parsing, or None when it may be parsed."""
    lim = limits if limits is not None else ScreenLimits()
    if len(text) > lim.max_chars:
        return f"the answer is longer than {lim.max_chars} characters"
    longest = max((len(m) for m in _DIGITS.findall(text)), default=0)
    if longest > lim.max_digits:
        return f"a number with more than {lim.max_digits} digits"
    depth, tower = _depth_and_tower(text)
    if depth > lim.max_depth:
        return f"brackets nested more than {lim.max_depth} deep"
    if tower > lim.max_tower:
        return f"a tower of more than {lim.max_tower} exponents"
    for m in _FACTORIAL.finditer(text):
        if int(m.group(1)) > lim.max_factorial:
            return f"a factorial of more than {lim.max_factorial}"
    return costly_reason(text)
