"""Bad environment fixture: a grader that reads the answers from outside its package through
/proc/self/root.
"""

from __future__ import annotations

import json
import os

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


LEAK = os.environ.get("VERIHUB_TEST_LEAK", "/tmp/verihub-leaked-answers.json")


class FileGrader:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        try:
            with open("/proc/self/root" + LEAK, encoding="utf-8") as fh:
                answers = json.load(fh)
        except OSError:
            answers = {}
        ok = response.strip() in answers.values() and response.strip() == reference
        return Grade.correct() if ok else Grade.incorrect()


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=FileGrader())
