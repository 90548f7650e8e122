"""Bad environment fixture: same task ids on every load, different prompts (unseeded randomness)."""

from __future__ import annotations

import random

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    rng = random.Random()  # unseeded: the prompts change on every load, the ids do not
    return [
        Task(id=f"w{i}", prompt=f"Say the word {w!r} back. (Note {rng.randrange(10**9)}.)", answer=w)
        for i, w in enumerate(WORDS)
    ]


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
