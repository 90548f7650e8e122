"""Bad environment fixture: a grader that tries to allocate 10 GB."""

from __future__ import annotations

from typing import Any

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class Hog:
    def __init__(self) -> None:
        self.inner = ExactGrader(kind="text")

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        scratch = bytearray(10 * 1024**3)  # far past the check's memory limit
        del scratch
        return await self.inner(response, reference=reference)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=Hog())
