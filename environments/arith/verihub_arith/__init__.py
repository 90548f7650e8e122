"""Procedural integer arithmetic for verihub (see README.md).

Each level is a finite family of expression templates over operand ranges (tens of thousands of
problems at level 1, billions at level 5). A seed visits a level's problems in a shuffled order
without repeats (see :mod:`hub.env.procedural`), and a problem's split is a hash of its
content, so ``train`` and ``test`` never share a problem and neither repeats one until its half
of the level is used up.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graders.exact import ExactGrader
from hub import Axis, DifficultySpace, SingleTurnEnv, Task
from hub.env.procedural import SPLITS, shuffled, split_of, stream_key

__all__ = ["LEVELS", "Family", "difficulty_space", "generate", "level_size", "load_environment"]

PROMPT = "Compute {expr}. Reply with the final answer as: Answer: <integer>"

Problem = tuple[str, int, str]
"""(expression, value, canonical content: commutative operands sorted, for the split)."""


@dataclass(frozen=True)
class Family:
    """Expression template ``build(*operands)`` over inclusive operand ``ranges``.

    ``build`` returns None for operands the template excludes (a negative difference, ...).
    Distinct operands give distinct expressions, so a level never repeats a prompt.
    """

    ranges: tuple[tuple[int, int], ...]
    build: Callable[..., Problem | None]

    @functools.cached_property
    def size(self) -> int:
        return math.prod(hi - lo + 1 for lo, hi in self.ranges)

    @functools.cached_property
    def _digits(self) -> tuple[tuple[int, int], ...]:
        """(lowest value, count) of each operand, last operand first (the decoding order)."""
        return tuple((lo, hi - lo + 1) for lo, hi in reversed(self.ranges))

    def decode(self, index: int) -> Problem | None:
        operands = []
        for lo, count in self._digits:
            index, r = divmod(index, count)
            operands.append(lo + r)
        return self.build(*reversed(operands))


def _sum(a: int, b: int) -> Problem:
    return f"{a} + {b}", a + b, f"{min(a, b)} + {max(a, b)}"


def _difference(a: int, b: int) -> Problem | None:
    return (f"{a} - {b}", a - b, f"{a} - {b}") if a >= b else None


def _product(a: int, b: int) -> Problem:
    return f"{a} * {b}", a * b, f"{min(a, b)} * {max(a, b)}"


def _quotient(q: int, b: int) -> Problem:
    return f"{q * b} / {b}", q, f"{q * b} / {b}"


def _sum_times(a: int, b: int, c: int) -> Problem:
    return f"({a} + {b}) * {c}", (a + b) * c, f"({min(a, b)} + {max(a, b)}) * {c}"


def _difference_times(a: int, b: int, c: int) -> Problem | None:
    return (f"({a} - {b}) * {c}", (a - b) * c, f"({a} - {b}) * {c}") if a > b else None


def _product_plus(a: int, b: int, c: int) -> Problem:
    return f"{a} * {b} + {c}", a * b + c, f"{min(a, b)} * {max(a, b)} + {c}"


def _product_minus(a: int, b: int, c: int) -> Problem:
    return f"{a} * {b} - {c}", a * b - c, f"{min(a, b)} * {max(a, b)} - {c}"


def _minus_product(a: int, b: int, c: int) -> Problem:
    return f"{c} - {a} * {b}", c - a * b, f"{c} - {min(a, b)} * {max(a, b)}"


LEVELS: dict[int, tuple[Family, ...]] = {
    # 1: one operand is a single digit (3 + 5, 417 + 1, 88 - 6, 250 * 0, 73 * 4).
    1: (
        Family(((0, 999), (0, 9)), _sum),
        Family(((0, 999), (0, 9)), _difference),
        Family(((0, 999), (0, 9)), _product),
    ),
    # 2: sums and differences of two- and three-digit numbers.
    2: (Family(((10, 999), (10, 999)), _sum), Family(((10, 999), (10, 999)), _difference)),
    # 3: products of two-digit numbers, and exact quotients.
    3: (Family(((10, 99), (10, 99)), _product), Family(((10, 99), (2, 99)), _quotient)),
    # 4: three operands, with parentheses.
    4: (
        Family(((2, 99), (2, 99), (2, 9)), _sum_times),
        Family(((2, 99), (2, 99), (2, 9)), _difference_times),
        Family(((2, 99), (2, 9), (2, 99)), _product_plus),
    ),
    # 5: larger products, often with negative results.
    5: (
        Family(((100, 999), (11, 99), (100, 9999)), _product_minus),
        Family(((100, 999), (11, 99), (100, 9999)), _minus_product),
    ),
}
"""The expression families of each difficulty level. The level's problems never overlap another
level's (the operand ranges differ), so a mixed stream does not repeat a prompt either."""


def level_size(level: int) -> int:
    """How many index values level ``level`` has (a few are excluded templates' operands)."""
    return sum(f.size for f in LEVELS[level])


def _problems(split: str, seed: int, level: int) -> Iterator[Problem]:
    """The problems of ``level`` in ``split``, shuffled by ``seed``, without end.

    Each pass visits every problem of the level once; a new pass (a new order) starts only
    after the whole level has been used, which at level 1 is after about 15,000 tasks.
    """
    families = LEVELS[level]
    size = level_size(level)
    epoch = 0
    while True:
        for index in shuffled(size, stream_key("arith", seed, level, epoch)):
            problem = _decode(families, index)
            if problem is not None and split_of(problem[2]) == split:
                yield problem
        epoch += 1


def _decode(families: tuple[Family, ...], index: int) -> Problem | None:
    for family in families:
        if index < family.size:
            return family.decode(index)
        index -= family.size
    raise IndexError(index)


def generate(split: str, seed: int, *, difficulty: int = 0) -> Iterator[Task]:
    """Tasks of ``split`` for ``seed``, without end and deterministic.

    ``difficulty`` 0 cycles through the levels (task ``i`` is at level ``i % 5 + 1``). Ids are
    ``{split}-{seed}-{index}``.
    """
    if split not in SPLITS:
        raise ValueError(f"arith has splits {SPLITS}, not {split!r}")
    levels = [difficulty] if difficulty else sorted(LEVELS)
    streams = {level: _problems(split, seed, level) for level in levels}
    index = 0
    while True:
        level = levels[index % len(levels)]
        expr, value, _ = next(streams[level])
        yield Task(
            id=f"{split}-{seed}-{index}",
            prompt=PROMPT.format(expr=expr),
            answer=str(value),
            metadata={"difficulty": level, "expression": expr, "split": split},
        )
        index += 1


def difficulty_space(start: int = 1) -> DifficultySpace:
    """One axis, ``level`` 1..5: more digits, then more operators (see :data:`LEVELS`)."""
    axis = Axis(
        "level",
        tuple(sorted(LEVELS)),
        "1: one single-digit operand; 2: two- and three-digit sums and differences; 3: two-digit "
        "products and exact quotients; 4: three operands with parentheses; 5: large products",
    )
    return DifficultySpace.of([axis], start={"level": start})


def _at_point(point: Mapping[str, Any], split: str, seed: int) -> Iterator[Task]:
    return generate(split, seed, difficulty=int(point["level"]))


def load_environment(*, difficulty: int = 0) -> SingleTurnEnv:
    """Build the environment. ``difficulty``: 1 (easiest) to 5, or 0 for a mix of all levels.

    The environment declares its difficulty space (``level`` 1..5, starting at ``difficulty`` or
    1), so a curriculum can ask for tasks at any level whatever ``difficulty`` is.
    """
    if difficulty not in range(0, 6):
        raise ValueError(f"difficulty must be 0 (mixed) or 1..5, got {difficulty}")
    return SingleTurnEnv(
        id="arith",
        tasks=lambda split, seed: generate(split, seed, difficulty=difficulty),
        grader=ExactGrader(kind="integer"),
        difficulty=difficulty_space(difficulty or 1),
        point_source=_at_point,
    )
