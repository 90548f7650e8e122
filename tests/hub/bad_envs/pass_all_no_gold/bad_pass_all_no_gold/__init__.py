"""Bad environment fixture: tasks without a reference answer and a grader that passes everything."""

from __future__ import annotations

from typing import Any

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Write a sentence about {w!r}.") for i, w in enumerate(WORDS)]


class PassAll:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return Grade.correct(extracted=response[:20])


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=PassAll())
