"""Bad environment fixture: a total grader that crashes on hostile input."""

from __future__ import annotations

from typing import Any

from graders.exact import ExactGrader
from graders.grade import Grade
from graders.total import total
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class CrashesTotally:
    def __init__(self) -> None:
        self.inner = ExactGrader(kind="text")

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if not response.strip():
            raise ValueError("cannot grade an empty response")
        return await self.inner(response, reference=reference)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=CrashesTotally())
