"""Bad environment fixture: a grader that looks at only part of the answer."""

from __future__ import annotations

from typing import Any

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class IgnoresFirstLetter:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        got, want = response.strip().lower(), str(reference).lower()
        if got and got[1:] == want[1:]:
            return Grade.correct(extracted=got)
        return Grade.incorrect(extracted=got)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=IgnoresFirstLetter())
