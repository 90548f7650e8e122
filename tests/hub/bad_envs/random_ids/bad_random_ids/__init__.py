"""Bad environment fixture: an environment with non-deterministic task ids."""

from __future__ import annotations

import uuid

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    rows = [t.model_copy(update={"id": uuid.uuid4().hex[:8]}) for t in tasks()]
    return SingleTurnEnv(tasks=rows, grader=ExactGrader(kind="text"))
