"""The process side of :mod:`graders.pool`: frames over pipes, the template server that forks
workers, the worker loop, and the parent's handles on the template and on one worker."""

from __future__ import annotations

import contextlib
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
from typing import IO, Any, TypeVar

from graders.pool.errors import PoolConfig, PoolError, PoolTimeout, WorkerDied

__all__ = ["serve", "timed_call"]

T = TypeVar("T")


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
