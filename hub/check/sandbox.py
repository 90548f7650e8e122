"""Running untrusted environment code in a separate, limited process.

- **network**: the child gets its own, empty network namespace (``unshare -rn``: an
  unprivileged user namespace) where the platform allows it; everywhere else the child's audit
  hook blocks ``socket.connect``/``getaddrinfo`` (weaker: it is in-process);
- **limits**: ``resource.setrlimit`` on CPU seconds, address space, file size and core dumps,
  plus a parent-side wall-clock timeout that kills the whole process group;
- **files**: the caller passes a read-only copy of the package (see :func:`read_only_copy`);
  the child's audit hook records reads outside the allowed folders and any write outside the
  run directory (a tripwire, not a wall: code that sets out to evade an in-process hook can).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Limits",
    "SandboxResult",
    "make_writable",
    "network_namespace_available",
    "read_only_copy",
    "run_sandboxed",
]


@dataclass(frozen=True)
class Limits:
    """Resource limits of a sandboxed process."""

    wall_s: float = 120.0
    cpu_s: int = 120
    memory_bytes: int = 4 * 1024**3
    file_size_bytes: int = 256 * 1024**2


@dataclass(frozen=True)
class SandboxResult:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    network_isolated: bool


@functools.lru_cache(maxsize=1)
def network_namespace_available() -> bool:
    """True when ``unshare -rn`` works here (Linux with unprivileged user namespaces)."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    try:
        proc = subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _limit(limits: Limits) -> None:  # runs in the child between fork and exec
    import resource

    os.setsid()
    for res, value in (
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CORE, 0),
    ):
        _soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(res, (cap, cap if hard == resource.RLIM_INFINITY else hard))


_LOOPBACK_UP = """
import fcntl, os, socket, struct, sys
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    req = struct.pack("16sH14s", b"lo", 0, b"")
    flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
os.execv(sys.argv[1], sys.argv[1:])
"""


def run_sandboxed(
    argv: Sequence[str],
    *,
    limits: Limits,
    env: Mapping[str, str],
    cwd: Path,
    isolate_network: bool = True,
    loopback: bool = False,
) -> SandboxResult:
    """Run ``argv`` with ``limits``; in its own network namespace when possible.

    ``loopback``: bring the namespace's loopback interface up (for a model server on 127.0.0.1);
    nothing outside the machine is reachable either way. ``argv[0]`` must then be a path.
    """
    isolated = isolate_network and network_namespace_available()
    cmd = list(argv)
    if isolated:
        up = [sys.executable, "-c", _LOOPBACK_UP] if loopback else []
        cmd = ["unshare", "-rn", *up, *argv]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=dict(env),
        preexec_fn=functools.partial(_limit, limits),  # noqa: PLW1509 (no threads in play here)
    )
    timed_out = False
    try:
        out, err = proc.communicate(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    return SandboxResult(
        returncode=proc.returncode, stdout=out, stderr=err, timed_out=timed_out, network_isolated=isolated
    )


def read_only_copy(src: Path, dest: Path) -> Path:
    """Copy ``src`` (a folder or a file) to ``dest`` and make the copy read-only."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "*.egg-info", "build", "dist")
    if src.is_dir():
        shutil.copytree(src, dest, ignore=ignore)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    paths = [dest, *dest.rglob("*")] if dest.is_dir() else [dest]
    for p in sorted(paths, key=lambda q: len(q.parts), reverse=True):
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return dest


def make_writable(path: Path) -> None:
    """Undo :func:`read_only_copy` so the copy can be deleted."""
    if not path.exists():
        return
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        try:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
        except OSError:
            pass
