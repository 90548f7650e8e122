from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from graders.pool.errors import PoolClosed, PoolConfig, WorkerDied, WorkerError
from graders.pool.process import _receive, _Template, _Worker, _write_frame

__all__ = ["WorkerPool", "shared_pool"]

T = TypeVar("T")


class WorkerPool:
    """A fixed number of persistent worker processes (see the module docstring).

    Workers start lazily on the first call, so creating a pool is cheap and has no side effects.
    Thread-safe: any number of threads or coroutines may submit at once; calls beyond ``size``
    wait for a free worker (that wait does not count against the timeout).
    """

    def __init__(self, config: PoolConfig | None = None, **options: Any) -> None:
        if config is not None and options:
            raise TypeError("pass either a PoolConfig or keyword options, not both")
        self.config = config if config is not None else PoolConfig(**options)
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self._template: _Template | None = None
        self._lock = threading.Lock()
        self._available = threading.Condition(self._lock)
        self._started = False
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        self._owner_pid = os.getpid()
        self.replaced = 0
        """How many workers were killed or lost and replaced (for monitoring)."""

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the workers now (otherwise the first call does)."""
        with self._lock:
            if self._closed:
                raise PoolClosed("the pool is closed; create a new WorkerPool")
            if self._started:
                return
            for _ in range(self.config.size):
                worker = self._new_worker()
                self._all.append(worker)
                self._idle.append(worker)
            self._started = True
            self._available.notify_all()

    def wait_ready(self) -> None:
        """Start the workers if needed and wait until each has finished starting.

        Raises :class:`WorkerDied` when one does not start within ``startup_timeout``.
        """
        self.start()
        with self._lock:
            workers = list(self._all)
        for worker in workers:
            worker.ensure_ready(self.config.startup_timeout)

    def close(self) -> None:
        """Stop every worker. Calls in flight fail with :class:`PoolClosed` or finish first."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers, self._all, self._idle = self._all, [], []
            template, self._template = self._template, None
            self._available.notify_all()  # wake threads waiting for a worker
        for worker in workers:
            worker.stop()
        if template is not None:
            template.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def pids(self) -> list[int]:
        """Process ids of the current workers that have started (for tests and monitoring)."""
        with self._lock:
            return [w.pid for w in self._all if w.pid is not None]

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:  # best effort; close() is the real API
        with contextlib.suppress(Exception):
            if not self._closed and os.getpid() == self._owner_pid:
                self.close()

    # -- calls -----------------------------------------------------------------------------------
    def submit(self, fn: Callable[..., T], /, *args: Any, timeout: float | None = None, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` in a worker and return its result.

        Raises :class:`PoolTimeout` after ``timeout`` seconds (default: the config's), having
        killed and replaced the worker; :class:`WorkerError` when ``fn`` raised;
        :class:`WorkerDied` when the worker exited (``during_call`` tells whether it was running
        ``fn`` then); :class:`PoolClosed` after :meth:`close`.
        """
        limit = self.config.default_timeout if timeout is None else timeout
        if limit <= 0:
            raise ValueError(f"timeout must be > 0, got {limit}")
        if not self._started:
            self.start()
        worker = self._checkout()
        healthy = False
        try:
            # start-up (imports, warm-up) does not count against the call's timeout
            worker.ensure_ready(self.config.startup_timeout)
            try:
                _write_frame(worker.stdin, (fn, args, kwargs))
            except (OSError, ValueError) as exc:
                raise WorkerDied(f"could not reach the worker: {exc}") from exc
            except (pickle.PicklingError, AttributeError, TypeError) as exc:
                healthy = worker.alive()  # nothing was sent: the worker is fine
                raise WorkerError(type(exc).__name__, f"could not send the call: {exc}") from exc
            deadline = time.monotonic() + limit
            try:
                tag, payload = _receive(worker, deadline, limit)
            except WorkerDied as exc:
                raise WorkerDied(str(exc), during_call=True) from exc
            healthy = True
        finally:
            if healthy:
                self._checkin(worker)
            else:
                self._replace(worker)
        if tag == "ok":
            result: T = payload
            return result
        type_name, message = payload
        raise WorkerError(type_name, message)

    async def asubmit(
        self, fn: Callable[..., T], /, *args: Any, timeout: float | None = None, **kwargs: Any
    ) -> T:
        """Async :meth:`submit`: awaits the result without blocking the event loop."""
        loop = asyncio.get_running_loop()
        executor = self._get_executor()
        call = functools.partial(self.submit, fn, *args, timeout=timeout, **kwargs)
        return await loop.run_in_executor(executor, call)

    # -- internals -------------------------------------------------------------------------------
    def _get_executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._closed:
                raise PoolClosed("the pool is closed; create a new WorkerPool")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.config.size, thread_name_prefix="verihub-pool"
                )
            return self._executor

    def _checkout(self) -> _Worker:
        """An idle worker, preferring one that has finished starting (a replacement may still
        be importing: a call should not wait for it while a ready worker is free)."""
        with self._available:
            while not self._idle and not self._closed:
                self._available.wait()
            if self._closed:
                raise PoolClosed("the pool is closed; create a new WorkerPool")
            chosen = next((w for w in self._idle if w.ready or w.poll_ready()), self._idle[0])
            self._idle.remove(chosen)
            return chosen

    def _checkin(self, worker: _Worker) -> None:
        with self._available:
            if self._closed:
                worker.stop()
                return
            self._idle.append(worker)
            self._available.notify()

    def _new_worker(self) -> _Worker:
        """A worker forked from the template (started first if needed). Lock held."""
        if self._template is None or not self._template.alive():
            self._template = _Template(self.config)
        try:
            return _Worker(self._template)
        except OSError:  # the template died since the check: one more try on a new one
            self._template = _Template(self.config)
            return _Worker(self._template)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        with self._available:
            if worker in self._all:
                self._all.remove(worker)
            if self._closed:
                return
            self.replaced += 1
            if not worker.ready and self._template is not None:
                self._template.close()  # a worker that never started: start a new template
                self._template = None
            fresh = self._new_worker()
            self._all.append(fresh)
            self._idle.append(fresh)
            self._available.notify()


_shared: dict[str, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(name: str, config: PoolConfig) -> WorkerPool:
    """The process-wide pool called ``name``: started with ``config`` on first use (or after it
    was closed), closed when the process exits. Graders use it when the caller passes none."""
    with _shared_lock:
        pool = _shared.get(name)
        if pool is None or pool.closed:
            pool = WorkerPool(config)
            _shared[name] = pool
            atexit.register(pool.close)
        return pool
