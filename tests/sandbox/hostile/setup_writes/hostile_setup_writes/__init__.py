"""Hostile fixture: its setup.py (run by the check's build step) writes the paths listed in
targets.txt (the test puts a file in a stand-in $HOME and one in verihub's own package there)."""

from __future__ import annotations

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
