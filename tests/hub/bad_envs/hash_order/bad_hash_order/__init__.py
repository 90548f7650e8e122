"""Bad environment fixture: tasks follow set order (the hash seed), so the ids are stable but the
tasks behind them differ in every process."""

from __future__ import annotations

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = {"apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"}


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
