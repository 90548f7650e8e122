"""The pool's exceptions and its configuration (see :mod:`graders.pool`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PoolClosed", "PoolConfig", "PoolError", "PoolTimeout", "WorkerDied", "WorkerError"]


class PoolError(Exception):
    """Base class of the pool's errors."""


class PoolTimeout(PoolError):
    """The call ran past its timeout; the worker was killed and replaced."""


class WorkerDied(PoolError):
    """The worker process exited (crash or kill); it was replaced.

    ``during_call`` is True when it exited while running the submitted function (the function's
    input may have crashed it: a C-level stack overflow, an allocation past the memory cap), and
    False when it could not be started or reached at all (the pool's own failure).
    """

    def __init__(self, message: str, *, during_call: bool = False) -> None:
        super().__init__(message)
        self.during_call = during_call


class WorkerError(PoolError):
    """The submitted function raised inside the worker."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message


class PoolClosed(PoolError):
    """The pool was closed; create a new one."""


@dataclass(frozen=True)
class PoolConfig:
    """Options of a :class:`WorkerPool`.

    ``size``: number of worker processes. ``memory_mb``: address-space cap per worker
    (``None`` for no cap). ``default_timeout``: seconds per call when ``submit`` gets none.
    ``initializer``: a picklable function run once, in the template that workers are forked from
    (imports, warm-up). ``startup_timeout``: seconds the template and a new worker may take to
    start (not counted in calls' timeouts).
    """

    size: int = 1
    memory_mb: int | None = 2048
    default_timeout: float = 5.0
    initializer: Callable[[], None] | None = None
    startup_timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"size must be >= 1, got {self.size}")
        if self.memory_mb is not None and self.memory_mb < 64:
            raise ValueError(f"memory_mb must be >= 64 (or None), got {self.memory_mb}")
        if self.default_timeout <= 0:
            raise ValueError(f"default_timeout must be > 0, got {self.default_timeout}")
