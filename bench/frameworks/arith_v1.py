"""The benchmark workload as a verifiers 0.4.x v1 taskset, written as verifiers' docs write one.

The same tasks as ``verifiers_env`` (verihub's ``arith`` generator at its mix of levels, built in
code), one ``@vf.reward`` for the exact integer after ``Answer:``. Both sides of the v1 comparison
load this module by name (``bench/frameworks`` on ``PYTHONPATH``): ``vf-eval arith_v1`` (null
harness, subprocess runtime) and ``verihub eval verifiers-v1 --env-arg taskset=arith_v1``.
"""

# verifiers.v1 is untyped to mypy (its bases are Any), as classes in its docs style subclass it:
# mypy: disable-error-code="misc,untyped-decorator"

from __future__ import annotations

import re
from collections.abc import Iterable

import verifiers.v1 as vf
from verifiers_env import rows

__all__ = ["ArithTaskset"]

_ANSWER = re.compile(r"Answer:\s*(-?\d+)\s*$")


class ArithData(vf.TaskData):
    answer: str


class ArithTask(vf.Task[ArithData]):
    @vf.reward
    async def exact_integer(self, task: ArithData, trace: vf.Trace) -> float:
        m = _ANSWER.search(trace.last_reply)
        return 1.0 if m and m.group(1) == task.answer else 0.0


class ArithConfig(vf.TasksetConfig):
    n: int = 5000
    seed: int = 0


class ArithTaskset(vf.Taskset[ArithTask, ArithConfig]):
    def load(self) -> Iterable[ArithTask]:
        for i, row in enumerate(rows(self.config.n, self.config.seed)):
            yield ArithTask(
                ArithData(id=str(i), prompt=row["question"], answer=row["answer"]), self.config.task
            )
