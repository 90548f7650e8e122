"""Timeout bait never pays: a policy that swaps its wrong answers for responses that time
grading out scores no better than one that answers wrongly, in the run summary (mean reward,
pass@1) and in the RL reward. Before the fix ``grade_rollout`` recorded such a grade as a
grader error, which summaries leave out, so the bait policy's mean rose from 0.5 to 1.0 here."""

from __future__ import annotations

import asyncio
from typing import Any

from graders.grade import Grade
from hub import Rollout, SingleTurnEnv
from hub.env.grading import grade_rollout, with_grade
from hub.env.types import Timing
from hub.run.metrics import SummaryBuilder
from tests.conftest import make_tasks

BAIT = "\\boxed{\\tan(\\tan(\\tan(\\tan(\\tan(1)))))}"
_LIMIT_S = 1.0
"""The grading time limit: the bait waits it out; an honest grade, which finishes without
suspending, is charged the wall time it held the loop, so a smaller limit fails honest answers
on a loaded machine (a pause of 0.1 s did, once in CI)."""


class SlowOnBaitGrader:
    """Right when the response ends in the reference; hangs (unbounded work) on the bait."""

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        if response == BAIT:
            await asyncio.sleep(3600)
        return Grade.correct() if response.endswith(str(reference)) else Grade.incorrect()


def _summary(answers: list[str]) -> tuple[float | None, float]:
    env = SingleTurnEnv(id="toy", tasks=make_tasks(len(answers)), grader=SlowOnBaitGrader())
    builder = SummaryBuilder(env_id="toy", env_version="1", model="m", rollouts_per_task=1)

    async def run() -> None:
        for task, answer in zip(make_tasks(len(answers)), answers, strict=True):
            builder.add_task(task.id)
            rollout = Rollout(
                task_id=task.id, rollout_index=0, messages=[], completion=answer, timing=Timing(started_at=0)
            )
            grade = await grade_rollout(env, task, rollout, timeout_s=_LIMIT_S)
            builder.add(with_grade(rollout, grade, 0.1))

    asyncio.run(run())
    summary = builder.build()
    return summary.mean_reward, summary.pass_at_k["1"]


def test_timeout_bait_never_beats_wrong_answers_in_the_summary() -> None:
    tasks = make_tasks(4)
    right = [f"Answer: {t.answer}" for t in tasks[:2]]
    honest = _summary(right + ["Answer: 0", "Answer: 0"])
    gaming = _summary(right + [BAIT, BAIT])
    assert honest == (0.5, 0.5)
    assert gaming[0] is not None and gaming[0] <= honest[0] and gaming[1] <= honest[1]
