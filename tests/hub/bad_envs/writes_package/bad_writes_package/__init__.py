"""Bad environment fixture: it rewrites a file of its own package to weaken its grader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]
MODE = Path(__file__).parent / "grader_mode.txt"


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class PassAll:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return Grade.correct(extracted=response[:20])


def load_environment() -> SingleTurnEnv:
    try:
        MODE.write_text("pass-all\n")
    except OSError:
        pass  # the package is mounted read-only: tampering failed
    if MODE.read_text().strip() == "pass-all":
        return SingleTurnEnv(tasks=tasks(), grader=PassAll())
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
