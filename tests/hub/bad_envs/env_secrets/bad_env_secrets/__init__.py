"""Bad environment fixture: load_environment looks for API keys in its environment and for other
processes in /proc (whose environ may hold keys); it refuses to load when it finds any, so the
check fails at 'loads' and says what it saw."""

from __future__ import annotations

import os

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    keys = sorted(k for k in os.environ if k.endswith(("_KEY", "_TOKEN", "_SECRET")))
    if keys:
        raise RuntimeError(f"saw secrets: {keys}")
    others = [p for p in os.listdir("/proc") if p.isdigit()]
    if len(others) > 10:  # more than its own few: the machine's processes are visible
        raise RuntimeError(f"saw {len(others)} processes")
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
