"""Bad environment fixture: one task has a reference answer; on the others the grader passes any short non-
empty answer.
"""

from __future__ import annotations

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [
        Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w if i == 0 else None)
        for i, w in enumerate(WORDS)
    ]


class Lenient:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        text = response.strip()
        if reference is not None:
            return Grade.correct() if text == reference else Grade.incorrect()
        return Grade.correct() if 0 < len(text) < 5000 else Grade.incorrect()


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=Lenient())
