"""A persistent pool of worker processes with a hard, parent-side timeout and a memory cap.

Reading guide
-------------
Graders that parse or compare hostile model text (sympy, LaTeX grammars, regexes over huge
inputs) must never hang the caller or blow up its memory. :class:`WorkerPool` runs such work in
long-lived child processes:

- **hard timeout, enforced by the parent**: the parent waits on the worker's pipe for at most
  ``timeout`` seconds; past that the worker is killed (``SIGKILL``) and replaced, and the call
  raises :class:`PoolTimeout`. Nothing relies on alarm signals or on the work cooperating.
- **warm replacements**: workers are forked from a template process that has already run
  ``initializer`` (imports, warm-up), so a killed worker's replacement is ready in milliseconds
  and a run of hostile inputs costs each call its timeout, not a cold start as well.
- **memory cap**: ``RLIMIT_AS`` (inherited by every worker), so a runaway allocation fails
  with ``MemoryError`` in the worker (:class:`WorkerError`) or kills only it (:class:`WorkerDied`).
- **persistent**: workers live across calls, so per-process caches are reused.
- **sync and async**: :meth:`WorkerPool.submit` blocks; :meth:`WorkerPool.asubmit` awaits
  without blocking the event loop (the wait happens on a pool-owned thread).

The template is a ``python -m graders.pool`` subprocess (nothing re-imports the caller's
``__main__``, unlike ``multiprocessing``'s spawn); it receives two pipes per worker over a Unix
socket and forks a worker onto them, which speaks length-prefixed pickle frames (stray prints go
to stderr). POSIX only; ``initializer`` must not start threads. Functions and arguments must be
picklable by reference (importable by module path, not defined in ``__main__``)::

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
import signal
import socket
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


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            raise EOFError("the pool closed the socket")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The template process (``python -m graders.pool``): never call it yourself.

    Reads the settings frame from the Unix socket on its stdin, caps its memory, runs the
    initializer, then forks one worker per pair of pipe descriptors received (workers inherit
    the cap and the warm state; exited workers are reaped by the kernel). Exits when the pool
    closes the socket.
    """
    os.dup2(2, 1)  # stray prints from libraries must not corrupt anything
    sock = socket.socket(fileno=os.dup(0))
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    memory_mb, initializer = pickle.loads(_recv_exact(sock, size))  # noqa: S301 - from our parent
    if memory_mb is not None:
        import resource

        limit = memory_mb * 1024 * 1024
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if initializer is not None:
        with contextlib.suppress(Exception):  # a failed warm-up is reported by the calls
            initializer()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # no zombies: the kernel reaps workers
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1, 2)
        except OSError:
            return
        if not data:
            return
        if len(fds) == 2 and os.fork() == 0:
            code = 0
            try:
                sock.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _work(os.fdopen(fds[0], "rb"), os.fdopen(fds[1], "wb"))
            except BaseException:  # noqa: BLE001 - a worker never returns into the template
                code = 1
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)


def _work(channel_in: IO[bytes], channel_out: IO[bytes]) -> None:
    """One worker: announce its pid, then answer ``(fn, args, kwargs)`` frames until told to stop."""
    _write_frame(channel_out, ("ready", os.getpid()))
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


class _Template:
    """The parent's handle on the template process that forks workers."""

    def __init__(self, config: PoolConfig) -> None:
        env = dict(os.environ)
        # the template imports what the parent can import (editable installs, test paths)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "graders.pool"], stdin=theirs.fileno(), env=env, close_fds=True
            )
        finally:
            theirs.close()
        self.sock = ours
        data = pickle.dumps((config.memory_mb, config.initializer), protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self) -> tuple[IO[bytes], IO[bytes]]:
        """Ask for a worker on two new pipes; returns the parent's ends (to it, from it)."""
        job_r, job_w = os.pipe()
        result_r, result_w = os.pipe()
        try:
            socket.send_fds(self.sock, [b"w"], [job_r, result_w])
        except OSError:
            os.close(job_w)
            os.close(result_r)
            raise
        finally:
            os.close(job_r)
            os.close(result_w)
        return os.fdopen(job_w, "wb"), os.fdopen(result_r, "rb")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()  # the template exits when its socket closes
        try:
            self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=2.0)


class _Worker:
    """One forked worker: the parent's ends of its pipes, and its pid once it has started."""

    def __init__(self, template: _Template) -> None:
        self.template = template
        self.stdin, self.stdout = template.fork()
        self.pid: int | None = None
        self.ready = False
        self._ready_lock = threading.Lock()

    def alive(self) -> bool:
        if self.pid is None:
            return self.template.alive()
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def wait_readable(self, seconds: float) -> bool:
        ready, _, _ = select.select([self.stdout], [], [], max(0.0, seconds))
        return bool(ready)

    def _take_ready(self, frame: tuple[str, Any]) -> None:
        tag, pid = frame
        if tag != "ready" or not isinstance(pid, int):
            raise WorkerDied(f"the worker sent {tag!r} instead of its start-up signal")
        self.pid, self.ready = pid, True

    def poll_ready(self) -> bool:
        """Whether the start-up signal has arrived (reads it if so); never blocks."""
        if self.ready:
            return True
        if not self._ready_lock.acquire(blocking=False):
            return False
        try:
            if not self.ready and self.wait_readable(0.0):
                self._take_ready(_read_frame(self.stdout))
        except (EOFError, OSError, pickle.UnpicklingError, ValueError, PoolError):
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
                frame = _receive(self, time.monotonic() + startup, startup)
            except PoolTimeout as exc:
                raise WorkerDied(f"the worker did not start within {startup:g}s") from exc
            self._take_ready(frame)

    def kill(self) -> None:
        """SIGKILL the worker and wait (up to 2 s) until it is gone; close the pipes."""
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            deadline = time.monotonic() + 2.0
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.002)
        for fh in (self.stdin, self.stdout):
            with contextlib.suppress(Exception):
                fh.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            _write_frame(self.stdin, None)
        deadline = time.monotonic() + 1.0
        while self.pid is not None and self.alive() and time.monotonic() < deadline:
            time.sleep(0.005)
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
            raise WorkerDied("the worker exited")
    try:
        frame: tuple[str, Any] = _read_frame(worker.stdout)
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        raise WorkerDied("the worker exited (or closed its pipe)") from exc
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


if __name__ == "__main__":
    serve()
