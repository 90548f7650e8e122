"""Bad environment fixture: task ids are unique in the first few tasks and repeat later."""

from __future__ import annotations

from collections.abc import Iterator

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks(split: str, seed: int) -> Iterator[Task]:
    for i in range(400):  # a generator: no duplicate check at construction
        w = WORDS[i % len(WORDS)]
        yield Task(id=f"w{i % 200}", prompt=f"Say the word {w!r} back ({i}).", answer=w)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks, grader=ExactGrader(kind="text"))
