"""Synchronous grading in a worker pool, off the event loop and under a hard timeout.

An environment's ``grade`` runs on the event loop that drives every rollout of the run. A grader
that computes synchronously (sympy, a large regex, waiting on a subprocess) blocks that loop:
every other rollout stalls, and the run's grading time limit cannot interrupt it (the runner can
only record such a grade as a timeout afterwards). Write the check as a plain function and let
:class:`PooledGrade` run it in a :class:`graders.pool.WorkerPool`, whose parent kills a worker
that runs past the timeout::

    # my_env/checks.py: importable by module path (the pool pickles the function by reference)
    def check(task: Task, completion: str) -> Grade:
        ...

    class MyEnv(MultiTurnEnv):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._check = PooledGrade(check, timeout_s=10.0)

        async def grade(self, task: Task, rollout: Rollout) -> Grade:
            return await self._check(task, rollout)

Keep ``timeout_s`` below the run's ``--grade-timeout`` (60 s by default), so that the worker is
killed before the runner stops waiting for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graders.grade import Grade
from graders.pool import PoolConfig, PoolError, PoolTimeout, WorkerError, WorkerPool, shared_pool
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
    function that raises, kills its worker or returns something other than a :class:`Grade`
    gives an error grade: never a silent zero.
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
            return Grade.timeout(f"{name} took longer than {self.timeout_s:g}s; its worker was killed")
        except WorkerError as exc:
            return Grade.error(f"{name} raised {exc.type_name}: {exc.message}")
        except PoolError as exc:
            return Grade.error(f"{name} failed in the grading pool: {type(exc).__name__}: {exc}")
        if not isinstance(result, Grade):
            return Grade.error(f"{name} returned {type(result).__name__}, not a Grade")
        return result
