"""Bad environment fixture: a grader that hangs."""

from __future__ import annotations

import time
from typing import Any

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class Hangs:
    def __init__(self) -> None:
        self.inner = ExactGrader(kind="text")

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if len(response) > 10_000:
            while True:  # a synchronous hang: asyncio cannot cancel it
                time.sleep(0.05)
        return await self.inner(response, reference=reference)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=Hangs())
