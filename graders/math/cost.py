"""A cost screen: refuse, before parsing, an answer whose evaluation cost cannot be bounded.

sympy evaluates powers, factorials and binomials exactly and special functions to ever higher
precision, so a short answer (``(10^{6})!``, ``\\Gamma(10^{9})``, a power tower,
``\\tan(\\tan(\\tan(\\tan 1)))``) can hold a worker for seconds or forever. :func:`costly_reason`
reads the answer once, as a small expression grammar over its tokens, and bounds for every
subexpression the decimal digits of its exact value (letters count as values up to 10), the
nesting of special functions (Gamma and zeta count twice; each application weighs ``4**(d-1)``
at depth ``d``) and whether it is a sum holding a letter (which sympy expands under a power).

An answer is refused when a bound passes its limit (:class:`CostLimits`). The reading is linear
and never raises: text it does not understand is skipped, left to the grammar under the pool's
timeout, which stays the real guarantee.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["CostLimits", "costly_reason"]


@dataclass(frozen=True)
class CostLimits:
    """Limits of the cost screen (generous: real answers are far below every one)."""

    max_digits: float = 100_000
    """Digits of an exactly evaluated value (``2^{2005}`` has 604)."""
    max_function_depth: int = 2
    """Special functions nested in one another (``\\sin(\\ln x)`` is 2, ``\\zeta(x)`` is 2)."""
    max_function_work: int = 8
    """Special-function work in the whole answer (``\\sin(\\ln x) + \\cos x`` is 4 + 1 + 1)."""
    max_function_argument_digits: float = 8
    """Digits of a special function's argument (``e^{10^{15}}`` takes seconds to evaluate)."""
    max_expanded_power: float = 40
    """Largest power of a sum holding a letter (``(x+1)^{9999}`` is expanded term by term)."""
    max_factorial: float = 1000
    """Largest argument of a factorial, double factorial or Gamma function."""
    max_sum_terms: float = 1000
    """Largest upper limit of a ``\\sum`` or ``\\prod``."""


class _TooCostly(Exception):
    pass


@dataclass(frozen=True)
class _Node:
    size: float = 0.0
    value: int | None = None
    depth: int = 0
    poly: bool = False
    symbolic: bool = False


_LETTER = _Node(size=1.0, symbolic=True)
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\.\d*)?|\.\d+|\s+|.", re.DOTALL)
_SPACING = frozenset({"\\,", "\\;", "\\:", "\\!", "\\ ", "\\quad", "\\qquad", "\\displaystyle"})
_SIZING = frozenset({"\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\bigl", "\\bigr"})
_OPEN = {"(": ")", "[": "]", "{": "}", "\\{": "\\}", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"}
_CLOSE = frozenset(_OPEN.values())
_PRODUCT = frozenset({"*", "/", "\\cdot", "\\times", "\\div", "\\ast"})
_FRACTIONS = frozenset({"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"})
_BINOMIALS = frozenset({"\\binom", "\\dbinom", "\\tbinom"})
_OPAQUE = frozenset(
    {"\\text", "\\mathrm", "\\textbf", "\\textrm", "\\mbox", "\\operatorname", "\\mathbf", "\\mathit"}
    | {"\\textit", "\\hbox", "\\begin", "\\end", "\\mathbb", "\\mathcal"}
)
_FUNCTIONS = frozenset(
    f"\\{name}"
    for name in (
        "sin cos tan cot sec csc arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth "
        "sech csch arsinh arcosh artanh exp log ln lg Gamma zeta erf"
    ).split()
)
_FACTORIAL_LIKE = frozenset({"\\Gamma"})
_HEAVY = frozenset({"\\Gamma", "\\zeta", "\\erf"})
_BIG_OPERATORS = frozenset({"\\sum", "\\prod"})
_LOG2 = math.log10(2)


def _bound(node: _Node) -> float:
    """An upper bound on the absolute value of ``node`` (inf when astronomically large)."""
    if node.value is not None:
        return float(abs(node.value))
    return math.inf if node.size > 300 else 10.0**node.size


class _Reader:
    """Recursive descent over the answer's tokens (see the module docstring)."""

    def __init__(self, tokens: list[str], limits: CostLimits) -> None:
        self.tokens = tokens
        self.at = 0
        self.limits = limits
        self.work = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.at += token is not None
        return token

    def check(self, node: _Node) -> _Node:
        lim = self.limits
        if node.size > lim.max_digits:
            raise _TooCostly(f"a value with more than {lim.max_digits:g} digits")
        if node.depth > lim.max_function_depth:
            raise _TooCostly(f"special functions nested more than {lim.max_function_depth} deep")
        return node

    def expression(self, closers: frozenset[str]) -> _Node:
        """Terms joined by anything that is not a product (sums, relations, commas)."""
        size, depth, value = 0.0, 0, None
        first, terms, symbolic = True, 0, False
        while (token := self.peek()) is not None and token not in closers:
            if token in _CLOSE:  # a stray closer of another bracket: skip it
                self.take()
                continue
            node = self.term(closers)
            if node is None:
                self.take()  # a separator: +, -, =, a comma, a relation, an unknown command
                first = False
                continue
            size = max(size, node.size) + (0.0 if first else _LOG2)
            depth = max(depth, node.depth)
            value = node.value if first else None
            first = False
            terms += 1
            symbolic = symbolic or node.symbolic or node.poly
        poly = symbolic and terms > 1
        return self.check(_Node(size=size, value=value, depth=depth, poly=poly, symbolic=symbolic))

    def term(self, closers: frozenset[str]) -> _Node | None:
        node = self.factor()
        if node is None:
            return None
        while (token := self.peek()) is not None and token not in closers and token not in ("+", "-"):
            if token in _PRODUCT:
                self.take()
                continue
            nxt = self.factor()
            if nxt is None:
                break
            value = node.value * nxt.value if node.value is not None and nxt.value is not None else None
            if value is not None and abs(value) > 10**60:
                value = None
            node = self.check(
                _Node(
                    size=node.size + nxt.size,
                    value=value,
                    depth=max(node.depth, nxt.depth),
                    symbolic=node.symbolic or nxt.symbolic or node.poly or nxt.poly,
                )
            )
        return node

    def factor(self) -> _Node | None:
        token = self.peek()
        if token in ("-", "+"):
            self.take()
            inner = self.factor()
            if inner is None:
                return None
            value = None if inner.value is None else -inner.value
            return _Node(inner.size, value, inner.depth, inner.poly, inner.symbolic)
        node = self.atom()
        if node is None:
            return None
        return self.postfix(node)

    def postfix(self, node: _Node) -> _Node:
        while (token := self.peek()) is not None:
            if token == "^":
                self.take()
                node = self.power(node, self.operand())
            elif token == "_":
                self.take()
                self.operand()  # a subscript: an index or a base, never evaluated as a power
            elif token == "!":
                self.take()
                if self.peek() == "!":
                    self.take()
                node = self.factorial(node)
            elif token == "'":
                self.take()
            else:
                break
        return node

    def power(self, base: _Node, exponent: _Node) -> _Node:
        depth = max(base.depth, exponent.depth)
        symbolic = base.symbolic or exponent.symbolic or base.poly or exponent.poly
        if base.value in (0, 1, -1):
            return self.check(_Node(size=0.0, depth=depth))
        times = _bound(exponent)
        if base.poly and times > self.limits.max_expanded_power:
            raise _TooCostly(f"a sum raised to a power above {self.limits.max_expanded_power:g}")
        size = math.inf if math.isinf(times) else times * max(base.size, _LOG2)
        value = None
        if base.value is not None and exponent.value is not None and 0 <= exponent.value and size <= 60:
            value = base.value**exponent.value
        return self.check(_Node(size=size, value=value, depth=depth, symbolic=symbolic))

    def factorial(self, argument: _Node) -> _Node:
        n = _bound(argument)
        if n > self.limits.max_factorial:
            raise _TooCostly(f"a factorial or Gamma of more than {self.limits.max_factorial:g}")
        size = n * math.log10(n) if n > 1 else 0.0
        value = math.factorial(int(n)) if argument.value is not None and 0 <= n <= 20 else None
        symbolic = argument.symbolic or argument.poly
        return self.check(_Node(size=size, value=value, depth=argument.depth, symbolic=symbolic))

    def operand(self) -> _Node:
        """A command's or a power's argument: a braced group, or one token (``2^10`` is 2^1 0)."""
        token = self.peek()
        if token is None:
            return _Node()
        if token in _OPEN or token in _SIZING:
            return self.atom() or _Node()
        if token[0].isdecimal():
            self.take()  # the whole digit run, though LaTeX reads one digit: an overestimate
            return self.number(token)
        return self.atom() or _Node()

    def group(self, opener: str) -> _Node:
        closer = _OPEN[opener]
        inner = self.expression(frozenset({closer}))
        if self.peek() == closer:
            self.take()
        return inner

    def atom(self) -> _Node | None:
        token = self.peek()
        if token is None:
            return None
        if token in _SIZING:
            self.take()
            nxt = self.peek()
            if nxt is not None and (nxt in _OPEN or nxt in (".", "|")):
                if nxt in _OPEN:
                    return self.atom()
                self.take()
            return _Node()
        if token in _OPEN:
            self.take()
            return self.group(token)
        if token[0].isdecimal():
            self.take()
            return self.number(token)
        if token.isalpha() and len(token) == 1:
            self.take()
            if token == "e" and self.peek() == "^":
                self.take()
                return self.function(self.operand(), heavy=False)
            return _LETTER
        if not token.startswith("\\"):
            return None
        return self.command(token)

    def number(self, token: str) -> _Node:
        digits = token.replace(".", "").lstrip("0")
        if "." in token or len(digits) > 60:
            return _Node(size=float(max(len(digits), 1)))
        value = int(token)
        return _Node(size=float(len(digits)), value=value)

    def command(self, token: str) -> _Node | None:
        self.take()
        if token in _FRACTIONS:
            top, bottom = self.operand(), self.operand()
            symbolic = top.symbolic or bottom.symbolic or top.poly or bottom.poly
            return self.check(
                _Node(size=top.size + bottom.size, depth=max(top.depth, bottom.depth), symbolic=symbolic)
            )
        if token == "\\sqrt":
            if self.peek() == "[":
                self.take()
                self.group("[")
            inner = self.operand()
            return _Node(size=inner.size, depth=inner.depth, symbolic=inner.symbolic or inner.poly)
        if token in _BINOMIALS:
            return self.binomial(self.operand(), self.operand())
        if token in _OPAQUE:
            if self.peek() == "{":
                self.take()
                self.skip_group()
            return _Node()
        if token in _FUNCTIONS:
            while self.peek() in ("^", "_"):  # \sin^2 x, \log_2 8
                self.take()
                self.operand()
            argument = self.operand() if self.peek() in _OPEN or self.peek() in _SIZING else self.factor()
            node = self.function(argument or _Node(), heavy=token in _HEAVY)
            if token in _FACTORIAL_LIKE:  # Gamma(n) is (n-1)!, evaluated exactly for an integer
                value = self.factorial(argument or _Node())
                node = self.check(_Node(size=max(value.size, node.size), depth=node.depth, symbolic=True))
            return node
        if token in _BIG_OPERATORS:
            upper = _Node()
            while self.peek() in ("^", "_"):
                mark = self.take()
                limit = self.operand()
                upper = limit if mark == "^" else upper
            if _bound(upper) > self.limits.max_sum_terms:
                raise _TooCostly(f"a sum or product of more than {self.limits.max_sum_terms:g} terms")
            return _Node(size=upper.size, depth=upper.depth)
        if token in _SPACING or token in _PRODUCT or token in _CLOSE:
            return None
        return _LETTER  # \pi, \infty, \theta, ...: a constant or a name

    def function(self, argument: _Node, *, heavy: bool) -> _Node:
        lim = self.limits
        depth = argument.depth + (2 if heavy else 1)
        self.work += 4 ** (min(depth, 8) - 1)
        if self.work > lim.max_function_work:
            raise _TooCostly("more special-function evaluation than can be bounded")
        if argument.size > lim.max_function_argument_digits:
            raise _TooCostly(
                f"a special function of a value with more than {lim.max_function_argument_digits:g} digits"
            )
        # a special function's value is not exact (sympy keeps it symbolic or evaluates it in
        # floating point), so its magnitude does not feed the exact-digit bound
        return self.check(_Node(size=argument.size + 1.0, depth=depth, symbolic=True))

    def binomial(self, n: _Node, k: _Node) -> _Node:
        top = _bound(n)
        low = _bound(k)
        if n.value is not None and k.value is not None:
            low = min(low, abs(n.value - k.value))
        size = 0.0 if low == 0 else min(top * _LOG2, low * math.log10(max(top, 2.0)))
        return self.check(_Node(size=size, depth=max(n.depth, k.depth)))

    def skip_group(self) -> None:
        level = 1
        while level and (token := self.take()) is not None:
            level += (token == "{") - (token == "}")


def costly_reason(text: str, limits: CostLimits | None = None) -> str | None:
    """Why evaluating the answer ``text`` may cost more than can be bounded, or None."""
    lim = limits if limits is not None else CostLimits()
    tokens = [t for t in _TOKEN.findall(text) if not t.isspace() and t not in _SPACING]
    reader = _Reader(tokens, lim)
    try:
        while reader.peek() is not None:
            reader.expression(frozenset())
            reader.take()  # a closer with no opener
    except _TooCostly as exc:
        return str(exc)
    except (RecursionError, ValueError, OverflowError, ArithmeticError):
        return None  # the bracket-depth and digit limits refuse what this cannot read
    return None
