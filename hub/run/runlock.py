"""One writer per run directory: an advisory lock with a record of who holds it.

A process that writes a run directory (``eval``, ``eval --resume``, ``regrade``, a sharded
merge) holds an exclusive :func:`fcntl.flock` on ``DIR/.lock`` for as long as it writes, and
records in that file who it is (pid, host, command, since). A second writer fails at once with
one line naming the holder. The kernel drops a ``flock`` when its process dies, however it
dies, so a lock left by a dead process is simply taken over (the stale record is replaced).

Readers (``show``, ``export``, ``view``, the leaderboard) never lock and never write: they skip
a final line that is still being written (see :meth:`hub.run.rundir.RunDir.iter_rollouts`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hub.env import RunDirError

__all__ = ["LOCK_FILE", "LockHolder", "RunLock", "holder_of"]

LOCK_FILE = ".lock"
_RETRY_S = 0.5
"""How long an acquire retries: a reader's :func:`holder_of` probe holds the lock for an instant."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a run directory's lock."""

    pid: int
    host: str
    purpose: str
    since: float

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"{self.purpose} (pid {self.pid} on {self.host}, since {when})"


class RunLock:
    """The exclusive writer lock of one run directory (reentrant on the same object)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._fd is not None

    @contextlib.contextmanager
    def hold(self, purpose: str) -> Iterator[None]:
        """Hold the lock for the block; :class:`RunDirError` naming the holder if another has it."""
        if self._fd is not None:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._acquire(purpose)
        try:
            yield
        finally:
            self._release()

    def _acquire(self, purpose: str) -> None:
        run_dir = self.path.parent
        existed = run_dir.is_dir()
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            if not existed:
                raise RunDirError(
                    f"cannot create the run directory {run_dir} ({reason}); choose another --out"
                ) from exc
            raise RunDirError(f"cannot write in the run directory {run_dir} ({reason})") from exc
        deadline = time.monotonic() + _RETRY_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                os.close(fd)
                holder = _read(self.path)
                who = holder.describe() if holder else "another process"
                raise RunDirError(
                    f"{self.path.parent} is in use by {who}; wait for it to finish or stop it, "
                    "then run the command again"
                ) from None
        record = {"pid": os.getpid(), "host": socket.gethostname(), "purpose": purpose, "since": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode(), 0)
        except OSError:
            pass  # the lock holds without its record (a full disk); holder_of says "another process"
        self._fd = fd

    def _release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # no stale record is left behind
        os.close(fd)  # closing drops the flock


def holder_of(run_dir: Path) -> LockHolder | None:
    """Who is writing ``run_dir`` now, or None when nobody is (a dead holder counts as nobody).

    Never blocks and never writes; the probe holds a shared lock for an instant, which a writer
    starting at that moment waits out (see ``_RETRY_S``).
    """
    path = run_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(path) or LockHolder(pid=0, host="?", purpose="another process", since=time.time())
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read(path: Path) -> LockHolder | None:
    try:
        data = json.loads(path.read_bytes() or b"null")
        return LockHolder(
            pid=int(data["pid"]),
            host=str(data["host"]),
            purpose=str(data["purpose"]),
            since=float(data["since"]),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None
