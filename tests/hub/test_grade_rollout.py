"""Grading one rollout under a limit: inline when the grade never waits, under a timer when it does."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from graders.grade import Grade
from hub import Rollout, SingleTurnEnv, Task
from hub.env.grading import grade_rollout
from hub.env.types import Message, Timing
from tests.conftest import make_tasks


def _rollout(task: Task, answer: str = "Answer: 1") -> Rollout:
    messages = [Message(role="user", content="q"), Message(role="assistant", content=answer)]
    return Rollout(task_id=task.id, rollout_index=0, messages=messages, timing=Timing(started_at=0.0))


class _TaskRecorder:
    """Records the task each call runs in and how many suspensions it makes before answering."""

    def __init__(self, waits: int = 0) -> None:
        self.waits = waits
        self.tasks: list[asyncio.Task[Any] | None] = []

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        self.tasks.append(asyncio.current_task())
        for _ in range(self.waits):
            await asyncio.sleep(0)
        self.tasks.append(asyncio.current_task())
        return Grade.correct(extracted=response)


class _WaitsThenHangs:
    """Computes, waits once, then hangs; records that it was cancelled."""

    def __init__(self) -> None:
        self.cancelled = False

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        await asyncio.sleep(0)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")


class _RaisesAfterWaiting:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        await asyncio.sleep(0)
        raise ValueError("bad reference")


async def test_a_grade_that_never_waits_runs_inline_in_the_callers_task() -> None:
    grader = _TaskRecorder(waits=0)
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=grader)
    task = make_tasks(1)[0]
    grade = await grade_rollout(env, task, _rollout(task), timeout_s=5.0)
    assert grade.status == "correct" and grade.extracted == "Answer: 1"
    assert grader.tasks == [asyncio.current_task()] * 2


async def test_a_grade_that_waits_finishes_under_the_limit() -> None:
    grader = _TaskRecorder(waits=3)
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=grader)
    task = make_tasks(1)[0]
    grade = await grade_rollout(env, task, _rollout(task), timeout_s=5.0)
    assert grade.status == "correct" and grade.extracted == "Answer: 1"
    assert len(grader.tasks) == 2 and grader.tasks[0] is asyncio.current_task()


class _AwaitsFuture:
    """Waits on a future the test resolves."""

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        await self.future
        return Grade.correct(extracted=response)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 has only asyncio.wait_for")
async def test_a_cancel_that_races_a_waiting_grade_is_not_swallowed() -> None:
    # the grade's result and the caller's cancellation land in the same loop turn: grading must end
    # cancelled (asyncio.wait_for on 3.11 returned the grade, and a cancelled run went on)
    answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=_AwaitsFuture(answered))
    task = make_tasks(1)[0]
    pending = asyncio.ensure_future(grade_rollout(env, task, _rollout(task), timeout_s=60.0))
    for _ in range(3):  # a few turns: the grade waits on the future, even from a task of its own
        await asyncio.sleep(0)
    answered.set_result(None)
    pending.cancel()
    outcome = await asyncio.gather(pending, return_exceptions=True)
    assert isinstance(outcome[0], asyncio.CancelledError)


async def test_a_grade_that_hangs_after_its_first_step_is_cancelled_at_the_limit() -> None:
    grader = _WaitsThenHangs()
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=grader)
    task = make_tasks(1)[0]
    grade = await grade_rollout(env, task, _rollout(task), timeout_s=0.1)
    assert grade.status == "incorrect" and grade.reason is not None
    assert grade.reason.startswith("timeout: grader exceeded 0.1s")
    assert grader.cancelled


async def test_a_grade_that_raises_after_waiting_is_a_counted_grader_failure() -> None:
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=_RaisesAfterWaiting())
    task = make_tasks(1)[0]
    grade = await grade_rollout(env, task, _rollout(task), timeout_s=5.0)
    assert grade.status == "incorrect" and grade.grader_failed and grade.score == 0.0
    assert grade.reason is not None and "bad reference" in grade.reason


async def test_cancelling_the_caller_cancels_a_waiting_grade() -> None:
    grader = _WaitsThenHangs()
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=grader)
    task = make_tasks(1)[0]
    pending = asyncio.ensure_future(grade_rollout(env, task, _rollout(task), timeout_s=60.0))
    for _ in range(5):
        await asyncio.sleep(0)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert grader.cancelled
