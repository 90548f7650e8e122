"""Costly math answers: short expressions whose exact evaluation takes seconds or forever.

:func:`costly_answers` generates them by class, seeded: nested special functions, power towers
(braced and parenthesised), huge exponents, huge factorial, Gamma and binomial arguments, long
sums and products, sums raised to huge powers, special functions of huge arguments, many nested
special functions side by side, and mixes of these. A math grader must refuse every one as ``incorrect``
quickly (a cost screen), not spend its worker's timeout on it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["COSTLY_CLASSES", "costly_answers"]

_FUNCTIONS = ("\\tan", "\\sin", "\\cos", "\\exp", "\\ln", "\\log", "\\arctan", "\\sinh", "\\zeta", "\\Gamma")
_SEEDS = ("1", "2", "x", "\\pi", "\\frac{1}{3}", "\\sqrt{2}", "0.5", "e")


def _num(rng: random.Random, low: int = 2, high: int = 99) -> str:
    return str(rng.randint(low, high))


def _big(rng: random.Random) -> str:
    """A large integer, written plainly or as a power of ten."""
    exponent = rng.randint(6, 12)
    return rng.choice([f"10^{{{exponent}}}", "9" * exponent, f"{rng.randint(2, 9)}\\cdot 10^{{{exponent}}}"])


def _nested_functions(rng: random.Random) -> str:
    text = rng.choice(_SEEDS)
    for _ in range(rng.randint(3, 7)):
        f = rng.choice(_FUNCTIONS)
        text = rng.choice([f"{f}({text})", f"{f}\\left({text}\\right)", f"{f}{{{text}}}", f"{f} {text}"])
    return text


def _tower(rng: random.Random) -> str:
    height = rng.randint(3, 5)
    parts = [rng.choice([_num(rng), _num(rng), "x", "e", "n"]) for _ in range(height)]
    parts[-2:] = [_num(rng, 9, 99), _num(rng, 5, 9)]  # the top two numbers: 2^{99^{9}} at least
    text = parts[-1]
    for base in reversed(parts[:-1]):
        text = f"{base}^{{{text}}}"
    return text


def _parenthesised_tower(rng: random.Random) -> str:
    text = _num(rng, 2, 9)
    for _ in range(rng.randint(8, 14)):
        text = f"({text})^{{{_num(rng, 10, 99)}}}"
    return text


def _huge_exponent(rng: random.Random) -> str:
    base = rng.choice([_num(rng), "x", "\\frac{7}{3}", "1.0001", "(x+1)", "\\sqrt{3}"])
    return f"{base}^{{{_big(rng)}}}"


def _huge_factorial(rng: random.Random) -> str:
    n = _big(rng)
    return rng.choice(
        [
            f"({n})!",
            f"\\Gamma({n})",
            f"\\binom{{10^{{{(e := rng.randint(7, 12))}}}}}{{{rng.randint(2, 5)}\\cdot 10^{{{e - 1}}}}}",
            f"{rng.randint(1001, 99999)}!",
            f"(({_num(rng, 5, 9)}!)!)!",
            f"\\frac{{({n})!}}{{{rng.randint(2, 9)}}}",
            f"{rng.randint(2000, 9000)}!!",
        ]
    )


def _long_sum(rng: random.Random) -> str:
    op = rng.choice(["\\sum", "\\prod"])
    term = rng.choice(["k", "k^{2}", "\\sin(k)", "\\frac{1}{k}"])
    return f"{op}_{{k=1}}^{{{_big(rng)}}} {term}"


def _expanded_power(rng: random.Random) -> str:
    base = rng.choice(["(x+1)", "(1-x)", "(x^{2}+x+1)", "(2x-3)", "(x+\\sqrt{2})"])
    return f"{base}^{{{rng.randint(1000, 99999)}}}"


def _big_argument(rng: random.Random) -> str:
    f = rng.choice(["e^", "\\exp", "\\sin", "\\ln", "\\tan"])
    argument = f"{_num(rng, 20, 99)}^{{{_num(rng, 9, 30)}}}"
    return f"{f}{{{argument}}}" if f == "e^" else f"{f}({argument})"


def _function_sum(rng: random.Random) -> str:
    terms = []
    for k in range(rng.randint(4, 8)):
        f, g = rng.choice(_FUNCTIONS[:9]), rng.choice(_FUNCTIONS[:9])
        terms.append(f"{f}({g}({k + 1}x))")
    return " + ".join(terms)


def _mix(rng: random.Random) -> str:
    makers = [_nested_functions, _tower, _huge_exponent, _huge_factorial]
    a, b = rng.choice(makers)(rng), rng.choice(makers)(rng)
    return rng.choice([f"{a} + {b}", f"\\frac{{{a}}}{{{b}}}", f"\\sqrt{{{a}}} - 1", f"({a})\\cdot 2"])


COSTLY_CLASSES: dict[str, Callable[[random.Random], str]] = {
    "nested_functions": _nested_functions,
    "power_tower": _tower,
    "parenthesised_tower": _parenthesised_tower,
    "huge_exponent": _huge_exponent,
    "huge_factorial": _huge_factorial,
    "long_sum": _long_sum,
    "expanded_power": _expanded_power,
    "big_argument": _big_argument,
    "function_sum": _function_sum,
    "mix": _mix,
}
"""Each class of costly answer and its generator."""


def costly_answers(n_per_class: int, *, seed: int = 0) -> list[tuple[str, str]]:
    """``(class, answer)`` pairs, ``n_per_class`` of each class (answers without a box)."""
    rng = random.Random(seed)
    return [(name, make(rng)) for name, make in COSTLY_CLASSES.items() for _ in range(n_per_class)]
