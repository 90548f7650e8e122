"""A persistent pool of worker processes with a hard, parent-side timeout and a memory cap.

Reading guide
-------------
Graders that parse or compare hostile model text (sympy, LaTeX grammars, regexes over huge
inputs) must never hang the caller or blow up its memory. :class:`WorkerPool` runs such work in
long-lived child processes:

- **hard timeout, enforced by the parent**: the parent waits on the worker's pipe for at most
  ``timeout`` seconds; past that the worker is killed (``SIGKILL``) and replaced, and the call
  raises :class:`PoolTimeout`. Nothing relies on alarm signals or on the work cooperating.
- **memory cap**: each worker lowers its own ``RLIMIT_AS`` with :func:`resource.setrlimit`
  at start-up, so a runaway allocation fails with ``MemoryError`` inside the worker (reported as
  :class:`WorkerError`) or kills only that worker (reported as :class:`WorkerDied`).
- **persistent**: workers live across calls, so per-process caches (a parsed reference answer,
  imported modules) are reused; ``initializer`` warms them up once per worker.
- **sync and async**: :meth:`WorkerPool.submit` blocks; :meth:`WorkerPool.asubmit` awaits
  without blocking the event loop (the wait happens on a pool-owned thread).

Workers are plain ``python -m graders.pool`` subprocesses speaking length-prefixed pickle
frames over their stdin/stdout (stray prints go to stderr). Unlike ``multiprocessing``'s spawn
they never re-import the caller's ``__main__``, so a pool works from any script, notebook or
test runner. The function and its arguments must be picklable by reference: a function
importable by module path (not one defined in ``__main__``). Example::

    with WorkerPool(size=2, memory_mb=1024) as pool:
        value = pool.submit(slow_function, "input", timeout=2.0)

Exceptions (all subclasses of :class:`PoolError`)::

    PoolError
    ├── PoolTimeout   the call ran past its timeout; its worker was killed and replaced
    ├── WorkerDied    the worker exited mid-call (crash, OOM kill); it was replaced
    ├── WorkerError   the function raised inside the worker (type name and message kept)
    └── PoolClosed    the pool was closed
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, TypeVar

__all__ = [
    "PoolClosed",
    "PoolConfig",
    "PoolError",
    "PoolTimeout",
    "WorkerDied",
    "WorkerError",
    "WorkerPool",
    "serve",
    "timed_call",
]

T = TypeVar("T")


class PoolError(Exception):
    """Base class of the pool's errors."""


class PoolTimeout(PoolError):
    """The call ran past its timeout; the worker was killed and replaced."""


class WorkerDied(PoolError):
    """The worker process exited during the call (crash or kill); it was replaced."""


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
    ``initializer``: a picklable function run once in each new worker (imports, warm-up).
    ``startup_timeout``: seconds a new worker may take to start (not counted in calls' timeouts).
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


_HEADER = struct.Struct("!Q")


def _write_frame(fh: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HEADER.pack(len(data)) + data)
    fh.flush()


def _read_exact(fh: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = fh.read(size)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(fh: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fh, _HEADER.size))
    return pickle.loads(_read_exact(fh, size))  # noqa: S301 - frames come from our own worker


def serve() -> None:
    """The loop of one worker process (``python -m graders.pool``): never call it yourself.

    Reads its settings, then ``(fn, args, kwargs)`` frames from stdin and answers each with a
    tagged result frame on the original stdout; ``print`` inside jobs goes to stderr.
    """
    channel_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from libraries must not corrupt the protocol
    channel_in = sys.stdin.buffer
    memory_mb, initializer = _read_frame(channel_in)
    if memory_mb is not None:
        import resource

        limit = memory_mb * 1024 * 1024
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if initializer is not None:
        with contextlib.suppress(Exception):  # a failed warm-up is reported by the calls
            initializer()
    _write_frame(channel_out, ("ready", None))
    while True:
        try:
            job = _read_frame(channel_in)
        except (EOFError, OSError):
            return
        if job is None:
            return
        fn, args, kwargs = job
        try:
            reply: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
            try:
                text = str(exc)[:500]
            except Exception:
                text = "<unprintable>"
            reply = ("err", (type(exc).__name__, text))
        try:
            _write_frame(channel_out, reply)
        except Exception as exc:  # an unpicklable result
            _write_frame(
                channel_out, ("err", (type(exc).__name__, f"could not send the result: {exc}"[:500]))
            )


def timed_call(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> tuple[float, T]:
    """``(seconds, fn(*args, **kwargs))``: submit this to learn how long the work took inside
    the worker (the rest of a call's wall time is the pool's overhead)."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


class _Worker:
    """One child process and the parent's ends of its pipes."""

    def __init__(self, config: PoolConfig) -> None:
        env = dict(os.environ)
        # the child imports what the parent can import (editable installs, test paths)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graders.pool"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.ready = False
        self._ready_lock = threading.Lock()
        _write_frame(self.stdin, (config.memory_mb, config.initializer))

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_readable(self, seconds: float) -> bool:
        ready, _, _ = select.select([self.stdout], [], [], max(0.0, seconds))
        return bool(ready)

    def poll_ready(self) -> bool:
        """Whether the start-up signal has arrived (reads it if so); never blocks."""
        if self.ready:
            return True
        if not self._ready_lock.acquire(blocking=False):
            return False
        try:
            if not self.ready and self.wait_readable(0.0) and _read_frame(self.stdout) == ("ready", None):
                self.ready = True
        except (EOFError, OSError, pickle.UnpicklingError, ValueError):
            return False  # a dead worker: the call that takes it reports WorkerDied
        finally:
            self._ready_lock.release()
        return self.ready

    def ensure_ready(self, startup: float) -> None:
        """Wait (at most ``startup`` seconds) for the start-up signal; WorkerDied otherwise."""
        with self._ready_lock:
            if self.ready:
                return
            try:
                tag, _ = _receive(self, time.monotonic() + startup, startup)
            except PoolTimeout as exc:
                raise WorkerDied(f"the worker did not start within {startup:g}s") from exc
            if tag != "ready":
                raise WorkerDied(f"the worker sent {tag!r} instead of its start-up signal")
            self.ready = True

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=2.0)
        for fh in (self.stdin, self.stdout):
            with contextlib.suppress(Exception):
                fh.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            _write_frame(self.stdin, None)
        try:
            self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _receive(worker: _Worker, deadline: float, limit: float) -> tuple[str, Any]:
    """The worker's next frame, waiting at most until ``deadline``."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise PoolTimeout(f"the call took longer than {limit:g}s; its worker was replaced")
        if worker.wait_readable(min(remaining, 0.5)):
            break
        if not worker.alive():
            raise WorkerDied(f"the worker exited with code {worker.process.returncode}")
    try:
        frame: tuple[str, Any] = _read_frame(worker.stdout)
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        raise WorkerDied(f"the worker exited with code {worker.process.poll()}") from exc
    return frame


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
                worker = _Worker(self.config)
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
            self._available.notify_all()  # wake threads waiting for a worker
        for worker in workers:
            worker.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def pids(self) -> list[int]:
        """Process ids of the current workers (for tests and monitoring)."""
        with self._lock:
            return [w.pid for w in self._all]

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
        :class:`WorkerDied` when the worker exited; :class:`PoolClosed` after :meth:`close`.
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
            tag, payload = _receive(worker, deadline, limit)
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

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        with self._available:
            if worker in self._all:
                self._all.remove(worker)
            if self._closed:
                return
            self.replaced += 1
            fresh = _Worker(self.config)
            self._all.append(fresh)
            self._idle.append(fresh)
            self._available.notify()


if __name__ == "__main__":
    serve()
