"""Bad environment fixture: load_environment starts a background process that outlives the check and writes
outside it.
"""

from __future__ import annotations

import os
import subprocess
import sys

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task

WORDS = ["apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "piano"]


def tasks() -> list[Task]:
    return [Task(id=f"w{i}", prompt=f"Say the word {w!r} back.", answer=w) for i, w in enumerate(WORDS)]


MARK = os.environ.get("VERIHUB_TEST_MARK", "/tmp/verihub-daemon-alive")
CODE = "import sys, time; time.sleep(2); open(sys.argv[1], 'w').write('alive')"


def load_environment() -> SingleTurnEnv:
    subprocess.Popen(
        [sys.executable, "-c", CODE, MARK],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
