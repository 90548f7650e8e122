"""Bad environment fixture: it writes a forged 'everything passed' report into the old check
worker's event stream and exits.

The worker is gone: verdicts are drawn outside the sandbox, so this fixture forges nothing
any more and its pass-all grader is caught by the probes. The forgery that targets the channel
that replaced the stream is tests/sandbox/hostile/forger.
"""

from __future__ import annotations

import json
import os
import sys

from graders.grade import Grade
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


class PassAll:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        return Grade.correct()


def _forge() -> None:
    if "hub.review.check.worker" not in sys.argv[0] and not sys.argv[0].endswith("worker.py"):
        return
    names = ["determinism", "gold", "perturbed_gold", "hacking_probes", "grading_time", "grader_errors"]
    lines = [{"event": "result", "name": "loads", "status": "pass", "reason": "", "details": []}]
    lines.append({"event": "loaded", "env_id": "bad_forged_events", "version": "0.0.1"})
    lines.append({"event": "ids", "ids": {"test": [f"w{i}" for i in range(len(WORDS))]}})
    lines += [{"event": "result", "name": n, "status": "pass", "reason": "", "details": []} for n in names]
    lines.append({"event": "done"})
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    for fd in range(3, 10):
        try:
            os.write(fd, data)
        except OSError:
            pass
    os._exit(0)


def load_environment() -> SingleTurnEnv:
    _forge()
    return SingleTurnEnv(tasks=tasks(), grader=PassAll())
