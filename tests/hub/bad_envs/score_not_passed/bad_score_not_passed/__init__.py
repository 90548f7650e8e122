"""Bad environment fixture: a grader that gives wrong answers full reward while saying they did not pass."""

from __future__ import annotations

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class FullRewardAnyway:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        if response.strip() == reference:
            return Grade.correct()
        return Grade(score=1.0, passed=False, status="partial", reason="not passed, but rewarded")


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=FullRewardAnyway())
