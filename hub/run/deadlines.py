"""Request time limits kept by one timer for every request in flight.

aiohttp's per-request ``total`` timeout schedules and cancels a timer on the event loop for each
request, a few percent of what the runner spends per rollout. :class:`RequestDeadlines` instead
notes each request's deadline in a dict and looks over them a few times per timeout (at most
once a second): a request past its deadline has its task cancelled, and the request sees a
timeout. The limit is at most a quarter of it (or a second) late.

Cancellation is shared with the task's other users, so a request converts a ``CancelledError``
into a timeout only when the sweep cancelled it and nobody else did (``Task.uncancel``, Python
3.11+; :data:`SWEPT` is false before that and the client keeps aiohttp's own timer).
"""

from __future__ import annotations

import asyncio
import sys

__all__ = ["SWEPT", "RequestDeadlines"]

SWEPT = sys.version_info >= (3, 11)
"""Whether deadlines can be swept (``Task.uncancel`` tells our cancel from anyone else's)."""


class RequestDeadlines:
    """Deadlines of the requests in flight, one per task. Use from one event loop:
    :meth:`start` in it, then :meth:`enter` / :meth:`leave` around each request, :meth:`stop`."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.period_s = max(0.005, min(1.0, timeout_s / 4))
        self._due: dict[asyncio.Task[object], float] = {}
        self._cancelled: set[asyncio.Task[object]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self.stop()  # started twice: still one timer
        self._loop = asyncio.get_running_loop()
        self._timer = self._loop.call_later(self.period_s, self._sweep)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def enter(self) -> asyncio.Task[object]:
        """Start the clock of the calling task's request; pass the task to :meth:`leave`."""
        task = asyncio.current_task()
        if task is None or self._loop is None:
            raise RuntimeError("RequestDeadlines.enter needs a task in the loop it was started in")
        self._due[task] = self._loop.time() + self.timeout_s
        return task

    def leave(self, task: asyncio.Task[object]) -> None:
        """The request is over (answered, failed or cancelled)."""
        del self._due[task]
        if task in self._cancelled:  # cancelled by the sweep, the error taken by someone else
            self._cancelled.discard(task)
            _uncancel(task)

    def timed_out(self, task: asyncio.Task[object]) -> bool:
        """Called with the request's ``CancelledError``: True when the sweep's cancel was the only
        one (the request timed out: go on), False when someone else cancelled too (re-raise)."""
        if task not in self._cancelled:
            return False
        self._cancelled.discard(task)
        return _uncancel(task) == 0

    def _sweep(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        for task, due in self._due.items():
            if due <= now and task not in self._cancelled:
                self._cancelled.add(task)
                task.cancel()
        self._timer = self._loop.call_later(self.period_s, self._sweep)


def _uncancel(task: asyncio.Task[object]) -> int:
    """Take back one cancel request; the number still pending (never called before 3.11)."""
    if sys.version_info >= (3, 11):
        return task.uncancel()
    raise RuntimeError("request deadlines are swept on Python 3.11+ only")  # pragma: no cover
