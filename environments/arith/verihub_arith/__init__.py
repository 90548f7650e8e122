"""Procedural integer arithmetic for verihub (see README.md)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

__all__ = ["generate", "load_environment"]

PROMPT = "Compute {expr}. Reply with the final answer as: Answer: <integer>"
_SPLIT_SALT = {"train": 1_000_003, "test": 2_000_029}


def _expression(rng: random.Random, level: int) -> tuple[str, int]:
    if level == 1:
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        return f"{a} + {b}", a + b
    if level == 2:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        return (f"{a} + {b}", a + b) if rng.random() < 0.5 else (f"{max(a, b)} - {min(a, b)}", abs(a - b))
    if level == 3:
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        return f"{a} * {b}", a * b
    if level == 4:
        a, b, c = rng.randint(2, 30), rng.randint(2, 30), rng.randint(2, 9)
        return f"({a} + {b}) * {c}", (a + b) * c
    a, b, c = rng.randint(100, 999), rng.randint(11, 99), rng.randint(100, 9999)
    return f"{a} * {b} - {c}", a * b - c


def generate(split: str, seed: int, *, difficulty: int = 0) -> Iterator[Task]:
    """Tasks of ``split`` for ``seed``, without end and deterministic."""
    index = 0
    while True:
        rng = random.Random(f"{_SPLIT_SALT[split]}:{seed}:{index}")
        level = difficulty if difficulty else index % 5 + 1
        expr, value = _expression(rng, level)
        yield Task(
            id=f"{split}-{seed}-{index}",
            prompt=PROMPT.format(expr=expr),
            answer=str(value),
            metadata={"difficulty": level, "expression": expr, "split": split},
        )
        index += 1


def load_environment(*, difficulty: int = 0) -> SingleTurnEnv:
    """Build the environment. ``difficulty``: 1 (easiest) to 5, or 0 for a mix of all levels."""
    if difficulty not in range(0, 6):
        raise ValueError(f"difficulty must be 0 (mixed) or 1..5, got {difficulty}")
    return SingleTurnEnv(
        id="arith",
        tasks=lambda split, seed: generate(split, seed, difficulty=difficulty),
        grader=ExactGrader(kind="integer"),
    )
