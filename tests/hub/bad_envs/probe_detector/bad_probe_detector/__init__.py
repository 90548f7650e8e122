"""Bad environment fixture: a grader that passes any wrong answer except the shapes of the check's known
probes and its fixed perturbation.
"""

from __future__ import annotations

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class ProbeDetector:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        text, ref = response.strip(), str(reference)
        if not text or len(text) > 100 or any(c in text for c in " \n\\"):
            return Grade.incorrect()
        if text == chr(ord(ref[0]) + 1) + ref[1:]:  # the check's perturbation: first letter + 1
            return Grade.incorrect()
        return Grade.correct()


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=ProbeDetector())
