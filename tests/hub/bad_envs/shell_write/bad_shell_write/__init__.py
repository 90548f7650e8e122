"""Bad environment fixture: load_environment writes outside the run directory through a shell
(a child process: the audit hook does not see the write)."""

from __future__ import annotations

import os
import subprocess

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]
MARK = os.environ.get("VERIHUB_TEST_MARK", "/tmp/verihub-shell-write")


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    subprocess.run(["sh", "-c", 'echo pwned > "$0"', MARK], check=False)
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
