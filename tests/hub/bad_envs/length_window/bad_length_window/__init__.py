"""Bad environment fixture: a grader that passes the reference, or any answer of 2,000 to 150,000
characters (longer than the short probes, shorter than the huge ones)."""

from __future__ import annotations

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class LengthWindow:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        text = response.strip()
        return Grade.correct() if text == reference or 2_000 <= len(text) <= 150_000 else Grade.incorrect()


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=LengthWindow())
