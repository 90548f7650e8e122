"""Bad environment fixture: a grader that computes without end."""

from __future__ import annotations

from typing import Any

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class Spins:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        n = 0
        while n >= 0:  # a synchronous busy loop: only the CPU limit or the watchdog ends it
            n += 1
        raise AssertionError("unreachable")


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=Spins())
