"""Bad environment fixture: task ids are stable for the first tasks and random after that."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


SUFFIX = uuid.uuid4().hex[:6]  # differs in every process


def tasks(split: str, seed: int) -> Iterator[Task]:
    for i in range(400):
        w = WORDS[i % len(WORDS)]
        yield Task(id=f"w{i}" if i < 200 else f"w{i}-{SUFFIX}", prompt=f"Say {w!r} ({i}).", answer=w)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks, grader=ExactGrader(kind="text"))
