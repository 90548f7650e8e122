"""Total grading: whatever a response holds, a grader answers with a verdict.

An ``error`` grade is left out of means, so a response that crashes the grader must not get one.
:func:`grade_of_exception` is the one rule: a time limit hit on the response (``TimeoutError``, a
pool timeout, a worker that died) is ``incorrect``, reason ``timeout: ...``; a failure of the
infrastructure (``OSError``, ``ImportError``, the pool's and the proof and judge clients' errors)
or a :class:`BrokenReference` (the task's reference cannot be used) stays ``error``; anything else
is a grader bug met on this response: :meth:`Grade.failed` (``incorrect``, reason
``grader_failed: ...``, counted apart).

:func:`total` applies it at a grader's boundary (an async ``__call__``); :class:`TotalGrader`
wraps any grader; the hub applies :func:`grade_of_exception` to an environment's ``grade``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from graders.grade import Grade
from graders.protocol import Grader

__all__ = ["BrokenReference", "TotalGrader", "grade_of_exception", "total"]

P = ParamSpec("P")
S = TypeVar("S")

# Exception types that mean the infrastructure failed, looked up only in modules already loaded
# (an exception of a type whose module was never imported cannot have been raised).
_INFRASTRUCTURE = (
    ("graders.proof.errors", "ProofCheckerError"),
    ("graders.rubric.errors", "JudgeError"),
)
_MAX_DETAIL = 300


class BrokenReference(ValueError):
    """Raised by a check when the task's reference cannot be used (a task bug): an ``error``
    grade, never a verdict on the response."""


def _loaded_type(module: str, name: str) -> type | None:
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def _detail(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:_MAX_DETAIL] if first else type(exc).__name__


def _response_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError):
        return True
    timeout = _loaded_type("graders.pool.errors", "PoolTimeout")
    died = _loaded_type("graders.pool.errors", "WorkerDied")
    if timeout is not None and isinstance(exc, timeout):
        return True
    return died is not None and isinstance(exc, died) and bool(getattr(exc, "during_call", False))


def _infrastructure(exc: BaseException) -> bool:
    if isinstance(exc, (OSError, ImportError)):
        return True
    pool_error = _loaded_type("graders.pool.errors", "PoolError")
    worker_error = _loaded_type("graders.pool.errors", "WorkerError")
    if pool_error is not None and isinstance(exc, pool_error):
        # a function that raised inside a worker is a grader bug on this input, not the pool's
        return worker_error is None or not isinstance(exc, worker_error)
    for module, name in _INFRASTRUCTURE:
        kind = _loaded_type(module, name)
        if kind is not None and isinstance(exc, kind):
            return True
    return False


def grade_of_exception(exc: Exception) -> Grade:
    """The grade a response gets when grading it raised ``exc`` (see the module docstring)."""
    if isinstance(exc, BrokenReference):
        return Grade.error(f"the task's reference cannot be used: {_detail(exc)}")
    if _response_timeout(exc):
        return Grade.incorrect(reason=f"timeout: grading this response ran out of time ({_detail(exc)})")
    if _infrastructure(exc):
        return Grade.error(f"the grading infrastructure failed: {_detail(exc)}")
    return Grade.failed(_detail(exc))


def total(
    call: Callable[Concatenate[S, P], Coroutine[Any, Any, Grade]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, Grade]]:
    """Make a grader's async ``__call__`` total: an exception becomes :func:`grade_of_exception`,
    a result that is not a :class:`Grade` becomes :meth:`Grade.failed`."""

    async def guarded(self: S, /, *args: P.args, **kwargs: P.kwargs) -> Grade:
        try:
            grade: Any = await call(self, *args, **kwargs)
        except Exception as exc:  # cancellation (a BaseException) still goes through
            return grade_of_exception(exc)
        if not isinstance(grade, Grade):
            return Grade.failed(f"the grader returned {type(grade).__name__}, not a Grade")
        return grade

    functools.update_wrapper(guarded, call)
    return guarded


class TotalGrader:
    """Any :class:`~graders.protocol.Grader`, made total (see :func:`total`)."""

    def __init__(self, grader: Grader) -> None:
        self.grader = grader

    @total
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return await self.grader(response, reference=reference)

    def __repr__(self) -> str:
        return f"TotalGrader({self.grader!r})"
