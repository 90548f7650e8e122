"""Starting a sandbox and supervising it from outside.

:class:`SandboxProcess` starts ``bwrap`` (:mod:`hub.sandbox.bwrap`) with the rlimits of
:class:`~hub.sandbox.policy.Limits` and, when asked, one end of a socket pair as file descriptor 3
(the only one the command inherits besides stdio), in a cgroup v2 group of its own where one can
be made (:mod:`hub.sandbox.cgroup`). A supervisor thread sums the sandbox's memory (processes and
tmpfs, or the cgroup's charge), CPU time, processes and writable host folder every ``poll_s``
seconds and kills the whole sandbox the moment a limit is passed; :attr:`SandboxProcess.breach`
says which. :attr:`SandboxProcess.on_exit` functions run once it has ended.

:func:`run` is the one-shot form: run a command, capture its output, return a
``CompletedProcess`` (returncode ``-9`` and a ``breach`` line on stderr when a limit killed it).
"""

from __future__ import annotations

import collections
import fcntl
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from hub.sandbox.bwrap import HOME, SANDBOX_UID, bwrap_argv, unavailable_reason
from hub.sandbox.cgroup import CgroupGroup, open_group
from hub.sandbox.policy import Limits, seccomp_filter_fd
from hub.sandbox.rwarea import AreaError, Receiver, extract, wrap
from hub.sandbox.userns import drops_root, host_ids, open_userns

__all__ = ["CHANNEL_FD", "SandboxProcess", "SandboxUnavailableError", "run", "tree_usage"]

CHANNEL_FD = 3
_SECCOMP_FD = 4
_ARGS_FD = 5
AREA_FD = 6
_USERNS_FD = 7
_TMPFS = ("/tmp", HOME, "/dev/shm")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_HZ = os.sysconf("SC_CLK_TCK")
_TAIL_BYTES = 16 * 1024


class SandboxUnavailableError(RuntimeError):
    """No sandbox can be made here; the message says what to install or enable."""


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                out += [int(c) for c in fh.read().split()]
        except OSError:
            continue
    return out


def tree_usage(root: int) -> tuple[int, int, int, float]:
    """(resident bytes summed, processes, threads, CPU seconds) of ``root`` and its descendants.

    Shared pages count once per process that maps them: an over-count, on the safe side. CPU
    time is user + system of every live process plus what their reaped children used.
    """
    rss = procs = threads = 0
    ticks = 0
    todo = [root]
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
                rss += int(fh.read().split()[1]) * _PAGE
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
            threads += len(os.listdir(f"/proc/{pid}/task"))
        except (OSError, IndexError, ValueError):
            continue
        procs += 1
        todo += _children(pid)
    return rss, procs, threads, ticks / _HZ


def _dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                continue
    return total


def _tmpfs_bytes(bwrap_pid: int, size: int, more: Sequence[str] = ()) -> int:
    """Bytes held in the sandbox's tmpfs folders (memory no process's RSS shows). Only a file
    system of exactly the sandbox's tmpfs ``size`` counts: while bubblewrap still sets up, the
    same path is the host's folder."""
    total = 0
    for inner in _children(bwrap_pid)[:1]:
        for mount in (*_TMPFS, *more):
            try:
                st = os.statvfs(f"/proc/{inner}/root{mount}")
            except OSError:
                continue
            if st.f_blocks * st.f_frsize == size:
                total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def _readable(root: Path) -> None:
    """Let the sandbox's user (not this process's) read the folder it gets a copy of: what this
    process owns under ``root`` gets read (and, for folders, search) permission for others."""
    me = os.geteuid()
    for dirpath, dirnames, filenames in os.walk(root):
        for path, extra in [(dirpath, 0o005)] + [(os.path.join(dirpath, n), 0o004) for n in filenames]:
            try:
                st = os.lstat(path)
                if st.st_uid == me and not os.path.islink(path) and st.st_mode & extra != extra:
                    os.chmod(path, st.st_mode | extra | (0o001 if st.st_mode & 0o100 else 0))
            except OSError:
                continue
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]


def _child_setup(
    limits: Limits, moves: Sequence[tuple[int, int]], cgroup_procs: str | None
) -> None:  # between fork and exec
    if cgroup_procs is not None:
        fd = os.open(cgroup_procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    top = max([10, *(h for h, _ in moves), *(t for _, t in moves)]) + 1
    high = [(fcntl.fcntl(h, fcntl.F_DUPFD, top), t) for h, t in moves]
    for fd, target in high:
        os.dup2(fd, target)
    # no RLIMIT_CPU: the supervisor sums CPU time from outside, where the sandbox cannot see
    # the limit (a check and an evaluation, whose CPU budgets differ, must look the same inside)
    for res, value in (
        (resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024),  # one process alone: a MemoryError
    ):
        _soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(res, (cap, cap))


class SandboxProcess:
    """One running sandbox (see the module docstring). Use as a context manager."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        limits: Limits,
        env: Mapping[str, str],
        ro_binds: Sequence[Path] = (),
        ro_map: Sequence[tuple[Path, str]] = (),
        rw_dir: Path | None = None,
        rw_area: Path | None = None,
        extra_fds: Sequence[tuple[int, int]] = (),
        network: bool = False,
        channel: bool = False,
        output: tuple[IO[bytes], IO[bytes]] | None = None,
        poll_s: float = 0.1,
        unsafe: bool = False,
        unsafe_cwd: Path | None = None,
        cwd: str | None = None,
    ) -> None:
        reason = None if unsafe else unavailable_reason()
        if reason is not None:
            raise SandboxUnavailableError(reason)
        self.unsafe = unsafe
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.limits = limits
        self.breach: str | None = None
        self.started = time.monotonic()
        self.peak_rss = 0
        self.cpu_s = 0.0
        self._rw_dir = rw_dir
        self._areas = () if rw_area is None else (str(rw_area),)
        self._hooks_lock = threading.Lock()
        self._poll_s = poll_s
        self._stop = threading.Event()
        self.sock: socket.socket | None = None
        self.on_exit: list[Callable[[], None]] = []
        self.cgroup: CgroupGroup | None = None
        theirs: socket.socket | None = None
        if channel:
            self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        opened: list[int] = []
        moves: list[tuple[int, int]] = []
        try:
            if theirs is not None:
                moves.append((theirs.fileno(), CHANNEL_FD))
            moves += list(extra_fds)
            if unsafe:
                argv = list(command)
            else:
                self.cgroup = open_group(limits.memory_mb * 1024 * 1024, limits.processes)
                userns = None
                if drops_root():  # the sandbox's user must not be host root (hub.sandbox.userns)
                    host = host_ids()
                    try:
                        ns_fd = open_userns(SANDBOX_UID, host)
                    except OSError as exc:
                        raise SandboxUnavailableError(f"no user namespace for the sandbox: {exc}") from exc
                    opened.append(ns_fd)
                    moves.append((ns_fd, _USERNS_FD))
                    userns = (_USERNS_FD, host)
                    if rw_area is not None:
                        _readable(rw_area)
                plan = bwrap_argv(
                    command,
                    limits=limits,
                    env=env,
                    ro_binds=ro_binds,
                    ro_map=ro_map,
                    rw_dir=rw_dir,
                    rw_area=rw_area,
                    network=network,
                    seccomp_fd=_SECCOMP_FD,
                    cwd=cwd or HOME,
                    args_fd=_ARGS_FD,
                    userns=userns,
                )
                argv = plan.argv
                filt = seccomp_filter_fd()
                opened.append(filt)
                moves.append((filt, _SECCOMP_FD))
                args = os.memfd_create("verihub-bwrap-args", os.MFD_CLOEXEC)
                opened.append(args)
                os.write(args, plan.args_bytes())
                os.lseek(args, 0, os.SEEK_SET)
                moves.append((args, _ARGS_FD))
            procs = None if self.cgroup is None else self.cgroup.procs_path
            self.proc = subprocess.Popen(  # noqa: S603 (argv is built here, not by a shell)
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output[0] if output is not None else subprocess.DEVNULL,
                env=dict(env) if unsafe else {},
                cwd=unsafe_cwd if unsafe else "/",
                stderr=output[1] if output is not None else subprocess.PIPE,
                close_fds=True,
                pass_fds=tuple(t for _, t in moves),
                start_new_session=True,
                preexec_fn=lambda: _child_setup(limits, moves, procs),  # noqa: PLW1509
            )
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.close()
            raise
        finally:
            for fd in opened:
                os.close(fd)
            if theirs is not None:
                theirs.close()
        self._watch = threading.Thread(target=self._supervise, name="verihub-sandbox-watch", daemon=True)
        self._watch.start()
        if output is None:  # keep only the end of stderr, and never let a full pipe block the sandbox
            threading.Thread(target=self._drain, name="verihub-sandbox-stderr", daemon=True).start()

    def _drain(self) -> None:
        """Read stderr in chunks and keep its last lines (a line without end stays bounded)."""
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        tail = b""
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            tail = (tail + chunk)[-_TAIL_BYTES:]
            lines = [ln.strip() for ln in tail.decode("utf-8", "replace").splitlines() if ln.strip()]
            self.stderr_tail.clear()
            self.stderr_tail.extend(ln[:500] for ln in lines[-40:])

    def failure(self) -> str:
        """Why the sandbox ended: the limit it broke, or its exit code and last stderr line."""
        if self.breach is not None:
            return f"killed by the sandbox supervisor ({self.breach})"
        code = self.proc.poll()
        last = f": {self.stderr_tail[-1]}" if self.stderr_tail else ""
        return f"the sandboxed process ended (exit code {code}){last}"

    # -- supervision ---------------------------------------------------------------------------
    def _supervise(self) -> None:
        try:
            self._watch_limits()
        finally:
            if self.proc.poll() is None and self.breach is not None:
                self.proc.wait()
            if self.proc.poll() is not None:
                self._ended()

    def when_ended(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` once the sandbox has ended (now, if it already has)."""
        with self._hooks_lock:
            self.on_exit.append(hook)
        if self.proc.poll() is not None:
            self._ended()

    def _ended(self) -> None:
        """Run the on-exit functions once (the supervisor, or :meth:`close`)."""
        with self._hooks_lock:
            hooks, self.on_exit = self.on_exit, []
        for hook in hooks:
            try:
                hook()
            except Exception:  # noqa: BLE001 (one failing hook must not keep the others from running)
                continue

    def _watch_limits(self) -> None:
        mem_cap = self.limits.memory_mb * 1024 * 1024
        disk_cap = self.limits.disk_mb * 1024 * 1024
        deadline = self.started + self.limits.wall_s
        tick = 0
        while not self._stop.wait(self._poll_s):
            if self.proc.poll() is not None:
                return
            rss, procs, threads, cpu = tree_usage(self.proc.pid)
            held = rss
            if self.cgroup is not None:
                held = max(rss, self.cgroup.memory_bytes())
            elif not self.unsafe and (tick % 2 == 0 or rss > mem_cap // 2):
                held = rss + _tmpfs_bytes(self.proc.pid, disk_cap, self._areas)
            self.peak_rss = max(self.peak_rss, held)
            why = None
            if cpu > self.limits.cpu_s:
                why = f"cpu: {cpu:.1f}s of CPU used by the sandbox's processes, limit {self.limits.cpu_s}s"
            elif held > mem_cap or (self.cgroup is not None and self.cgroup.oom_kills()):
                why = (
                    f"memory: {held // 2**20} MiB held by the sandbox (its processes and its "
                    f"tmpfs folders), limit {self.limits.memory_mb} MiB"
                )
            elif threads > self.limits.processes:
                why = f"processes: {procs} processes, {threads} threads, limit {self.limits.processes}"
            elif time.monotonic() > deadline:
                why = f"wall clock: running past {self.limits.wall_s:g}s"
            elif self._rw_dir is not None and tick % 10 == 0 and _dir_bytes(self._rw_dir) > disk_cap:
                why = f"disk: {self._rw_dir} holds more than {self.limits.disk_mb} MiB"
            tick += 1
            if why is not None:
                self.breach = why
                self.kill()
                return

    def kill(self) -> None:
        """Kill the whole sandbox (every process in its pid namespace dies with bwrap's)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the sandbox to end (killing it past the wall-clock limit); its exit code."""
        left = self.limits.wall_s - (time.monotonic() - self.started)
        try:
            return self.proc.wait(timeout=max(0.0, left if timeout is None else min(left, timeout)))
        except subprocess.TimeoutExpired:
            if self.breach is None:
                self.breach = f"wall clock: running past {self.limits.wall_s:g}s"
            self.kill()
            return self.proc.wait()

    def close(self) -> None:
        """End the sandbox: close the channel, give it a moment to exit, then kill it.

        :attr:`cpu_s` keeps the CPU time its processes used (read just before they end: bwrap
        does not reap its pid namespace's init, so ``wait4`` on bwrap does not include it)."""
        if self.proc.poll() is None:
            self.cpu_s = tree_usage(self.proc.pid)[3]
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
        self._stop.set()
        self.finish()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def finish(self) -> None:
        """After the sandbox ended: run the on-exit functions, kill what is left in its cgroup
        and remove it (idempotent)."""
        self._ended()
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run(
    argv: Sequence[str],
    *,
    ro_binds: Sequence[str | os.PathLike[str]] = (),
    rw_dir: str | os.PathLike[str] | None = None,
    network: bool = False,
    timeout_s: float = 120.0,
    memory_mb: int = 4096,
    env: Mapping[str, str] | None = None,
    limits: Limits | None = None,
    cwd: str | os.PathLike[str] | None = None,
    unsafe: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a fresh sandbox and capture its output.

    ``ro_binds``: host paths readable inside at the same path (the interpreter and the system
    libraries always are); ``rw_dir``: one host folder writable at the same path: inside, a
    tmpfs of ``limits.disk_mb`` holding a copy of it, whose files are written back when the
    command ends (not after a limit's kill; see :mod:`hub.sandbox.rwarea`); ``network``: share
    the host's network (trusted work only);
    ``env``: the whole environment inside (default: ``PATH``, ``HOME``, ``LANG``). The working
    directory is a private tmpfs unless ``cwd`` names one inside (e.g. a folder of ``rw_dir``).
    ``unsafe``: run without the sandbox (``--unsafe-no-sandbox``; limits still apply). A limit
    breach kills the sandbox: returncode ``-9`` and a line ``verihub sandbox: killed: <why>``
    at the end of stderr. Raises
    :class:`SandboxUnavailableError` when no sandbox can be made here.
    """
    lim = limits or Limits(wall_s=timeout_s, cpu_s=int(timeout_s) + 1, memory_mb=memory_mb)
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": HOME, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    area = None if rw_dir is None or unsafe else Path(rw_dir)
    command = list(argv)
    receiver: Receiver | None = None
    extra: list[tuple[int, int]] = []
    if area is not None:  # the folder is a size-capped tmpfs inside, sent back at the end
        r, w = os.pipe()
        receiver = Receiver(r, cap=lim.disk_mb * 1024 * 1024 + (1 << 20))
        extra.append((w, AREA_FD))
        command = wrap(command, sys.executable, area, str(cwd or HOME), AREA_FD)
    # output goes to files (each capped by RLIMIT_FSIZE), of which the last MiB is read back
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                box = SandboxProcess(
                    command,
                    limits=lim,
                    env=dict(env) if env is not None else base,
                    ro_binds=[Path(p) for p in ro_binds],
                    rw_dir=None if rw_dir is None or area is not None else Path(rw_dir),
                    rw_area=area,
                    extra_fds=extra,
                    network=network,
                    output=(out, err),
                    cwd=None if cwd is None or area is not None else str(cwd),
                    unsafe=unsafe,
                    unsafe_cwd=None if cwd is None else Path(cwd),
                )
            finally:
                for w, _target in extra:
                    os.close(w)
            code = box.wait()
            box._stop.set()
            box.finish()
            stdout, stderr = _tail(out), _tail(err)
        if receiver is not None and area is not None:
            receiver.join(timeout=30.0)
            if box.breach is None and code != -signal.SIGKILL:
                try:
                    if receiver.overflow:
                        raise AreaError(f"the sandbox's folder holds more than {lim.disk_mb} MiB")
                    extract(receiver.file, area, lim.disk_mb * 1024 * 1024)
                except AreaError as exc:
                    code = code or 1
                    stderr += f"\nverihub sandbox: {exc}\n"
    finally:
        if receiver is not None:
            receiver.close()
    if box.breach is not None:
        stderr += f"\nverihub sandbox: killed: {box.breach}\n"
    return subprocess.CompletedProcess(list(argv), code, stdout, stderr)


def _tail(fh: IO[bytes], limit: int = 1 << 20) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(max(0, size - limit))
    return fh.read().decode("utf-8", "replace")
