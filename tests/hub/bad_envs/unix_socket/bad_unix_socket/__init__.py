"""Bad environment fixture: a grader that asks a local service for the answers over a unix socket."""

from __future__ import annotations

import socket

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


SOCK = "/tmp/verihub-redteam.sock"


class AskService:
    def __init__(self) -> None:
        self.inner = ExactGrader(kind="text")

    async def __call__(self, response: str, *, reference: object) -> Grade:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(0.5)
                s.connect(SOCK)
                s.sendall(response[:100].encode())
        except OSError:
            pass
        return await self.inner(response, reference=reference)


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=AskService())
