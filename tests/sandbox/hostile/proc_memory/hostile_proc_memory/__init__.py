"""Hostile fixture: at load it starts 6 processes of 100 MiB each (each far below a
per-process limit) that live as long as the sandbox, then behaves."""

from __future__ import annotations

import os
import time

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    for _ in range(6):
        if os.fork() == 0:
            ballast = bytearray(100 * 2**20)
            for i in range(0, len(ballast), 4096):
                ballast[i] = 1
            time.sleep(600)
            os._exit(0)
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
