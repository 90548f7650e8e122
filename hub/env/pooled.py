"""Synchronous grading in a worker pool, off the event loop and under a hard timeout.

A grader that computes synchronously (sympy, a large regex, waiting on a subprocess) blocks the
event loop that drives every rollout of the run, and the run's grading time limit cannot
interrupt it. Write the check as a plain, importable function (the pool pickles it by reference)
and let :class:`PooledGrade` run it in a :class:`graders.pool.WorkerPool`, whose parent kills a
worker that runs past the timeout::

    self._check = PooledGrade(check, timeout_s=10.0)     # in __init__
    return await self._check(task, rollout)              # in grade

Keep ``timeout_s`` below the run's ``--grade-timeout`` (60 s by default), so that the worker is
killed before the runner stops waiting for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graders.grade import Grade
from graders.pool import PoolConfig, PoolError, PoolTimeout, WorkerDied, WorkerError, WorkerPool, shared_pool
from hub.env.types import Rollout, Task

__all__ = ["PooledGrade", "SyncGradeFn", "default_grading_pool"]

SyncGradeFn = Callable[[Task, str], Grade]
"""A synchronous check: ``fn(task, completion) -> Grade``, importable by module path."""


def default_grading_pool() -> WorkerPool:
    """The shared pool of :class:`PooledGrade` (two workers, 2 GiB each; started on first use)."""
    return shared_pool("hub.env.pooled", PoolConfig(size=2, memory_mb=2048))


@dataclass(frozen=True)
class PooledGrade:
    """An async grade from a synchronous ``fn(task, completion) -> Grade`` run in a worker pool.

    ``pool``: the pool to use (default: :func:`default_grading_pool`). ``timeout_s``: the hard
    limit per grade; past it the worker is killed and replaced and the grade is a timeout. A
    function that raises gives ``Grade.failed`` (``grader_failed``: scored 0, counted apart); a
    pool that cannot run it or a result that is not a :class:`Grade` gives an error grade.
    """

    fn: SyncGradeFn
    timeout_s: float = 10.0
    pool: WorkerPool | None = None

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")

    async def __call__(self, task: Task, rollout: Rollout) -> Grade:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        pool = self.pool if self.pool is not None else default_grading_pool()
        try:
            result = await pool.asubmit(self.fn, task, rollout.completion, timeout=self.timeout_s)
        except PoolTimeout:
            # the clock starts when a ready worker has the job: running past it is the response's
            # doing, a counted 0 (an error would leave the mean, so timeout bait would pay)
            return Grade.incorrect(
                reason=f"timeout: {name} took longer than {self.timeout_s:g}s; its worker was killed"
            )
        except WorkerDied as exc:
            if exc.during_call:
                return Grade.incorrect(reason=f"{name} crashed its worker on this response: {exc}")
            return Grade.error(f"{name} failed in the grading pool: WorkerDied: {exc}")
        except WorkerError as exc:  # raised on this response: a grader bug, scored 0, counted apart
            return Grade.failed(f"{name} raised {exc.type_name}: {exc.message}"[:500])
        except PoolError as exc:
            return Grade.error(f"{name} failed in the grading pool: {type(exc).__name__}: {exc}")
        if not isinstance(result, Grade):
            return Grade.error(f"{name} returned {type(result).__name__}, not a Grade")
        return result
