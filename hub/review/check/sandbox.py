"""Running untrusted environment code in a separate, limited process.

- **network**: the child gets its own, empty network namespace (``unshare -rn``: an
  unprivileged user namespace) where the platform allows it; everywhere else the child's audit
  hook blocks ``socket.connect``/``getaddrinfo`` (weaker: it is in-process);
- **limits**: ``resource.setrlimit`` on CPU seconds, address space, file size and core dumps,
  plus a parent-side wall-clock timeout that kills the whole process group;
- **processes**: where the platform allows it the child gets its own pid namespace
  (``unshare -pf``): when the command ends, every process it started ends with it, even one that
  left the process group (``setsid``). Elsewhere such a process can outlive the check;
- **files**: the caller passes a read-only copy of the package (see :func:`read_only_copy`).
  File modes do not stop root (nor root in a user namespace), so where the platform allows it
  the child also gets its own mount namespace (``unshare -m``) in which the folders in
  ``read_only`` are bind-mounted read-only: writing there fails with EROFS for everyone.
  Elsewhere the modes are all there is, and :func:`mount_namespace_available` says so. The
  child's audit hook records reads outside the allowed folders and any write outside the run
  directory (a tripwire, not a wall: code that sets out to evade an in-process hook can).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Limits",
    "SandboxResult",
    "make_writable",
    "mount_namespace_available",
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
    read_only_mounted: bool = False


@functools.cache
def _unshare_works(flags: str) -> bool:
    """True when ``unshare FLAGS true`` succeeds here (probed once per flag set)."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    try:
        proc = subprocess.run([exe, flags, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def network_namespace_available() -> bool:
    """True when ``unshare -rn`` works here (Linux with unprivileged user namespaces)."""
    return _unshare_works("-rn")


def _limit(limits: Limits) -> None:  # runs in the child between fork and exec
    import resource

    os.setsid()
    for res, value, grace in (
        # the CPU hard limit is 2s past the soft one, so the child first gets SIGXCPU (which
        # says why it died) and SIGKILL only if it ignores that
        (resource.RLIMIT_CPU, limits.cpu_s, 2),
        (resource.RLIMIT_AS, limits.memory_bytes, 0),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes, 0),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        _soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(res, (cap, cap + grace if hard == resource.RLIM_INFINITY else hard))


# Runs first inside the namespaces, then execs the real command: argv = [json spec, command...].
# Bind-mounts each read-only folder onto itself and remounts it read-only, keeping the flags
# (nosuid, nodev, ...) the kernel locks in a user namespace; brings loopback up if asked.
_PREPARE = """
import ctypes, fcntl, json, os, socket, struct, sys
spec = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
KEEP = {2: 2, 4: 4, 8: 8, 1024: 1024, 2048: 2048, 4096: 1 << 21}  # ST_* -> MS_*
for path in spec["read_only"]:
    target = os.fsencode(path)
    flags = sum(ms for st, ms in KEEP.items() if os.statvfs(path).f_flag & st)
    for src, how in ((target, MS_BIND | MS_REC), (None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)):
        if libc.mount(src, target, None, how, None) != 0:
            sys.stderr.write(f"verihub sandbox: cannot mount {path} read-only: "
                             f"{os.strerror(ctypes.get_errno())}\\n")
            sys.exit(125)
if spec.get("writable") is not None:
    # everything read-only but the writable folders (bound onto themselves first, so that they
    # are mounts of their own and keep their write access); /proc, /sys and /dev stay as they are
    import re
    for path in spec["writable"]:
        if libc.mount(os.fsencode(path), os.fsencode(path), None, MS_BIND | MS_REC, None) != 0:
            sys.stderr.write(f"verihub sandbox: cannot bind {path}: {os.strerror(ctypes.get_errno())}\\n")
            sys.exit(125)
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        points = [re.sub(r"\\\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), ln.split()[4]) for ln in fh]
    skip = ("/proc", "/sys", "/dev")
    for point in sorted(set(points)):
        if point in spec["writable"] or any(point == d or point.startswith(d + "/") for d in skip):
            continue
        try:
            flags = sum(ms for st, ms in KEEP.items() if os.statvfs(point).f_flag & st)
        except OSError:
            continue
        how = MS_REMOUNT | MS_BIND | MS_RDONLY | flags
        if libc.mount(None, os.fsencode(point), None, how, None) != 0 and point == "/":
            sys.stderr.write(f"verihub sandbox: cannot make / read-only {os.strerror(ctypes.get_errno())}\\n")
            sys.exit(125)
if spec["loopback"]:
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
if spec.get("pid_init"):
    # we are pid 1 of a new pid namespace: run the command as our child and wait; when we exit,
    # the kernel kills every process left in the namespace (a daemon cannot outlive the check).
    # The command is not pid 1 itself, which would ignore signals such as SIGXCPU.
    child = os.fork()
    if child == 0:
        os.execv(sys.argv[2], sys.argv[2:])
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
os.execv(sys.argv[2], sys.argv[2:])
"""


def _prepare(
    read_only: Sequence[Path], loopback: bool, pid_init: bool = False, writable: Sequence[Path] | None = None
) -> list[str]:
    spec = {
        "read_only": [str(p) for p in read_only],
        "loopback": loopback,
        "pid_init": pid_init,
        "writable": None if writable is None else [os.path.realpath(p) for p in writable],
    }
    return [sys.executable, "-c", _PREPARE, json.dumps(spec)]


def pid_namespace_available() -> bool:
    """True when ``unshare -rpf`` works here: the child can get its own pid namespace, so every
    process it starts dies with it."""
    return _unshare_works("-rpf")


@functools.lru_cache(maxsize=1)
def mount_namespace_available() -> bool:
    """True when a child can get its own mount namespace with read-only bind mounts here."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    with tempfile.TemporaryDirectory(prefix="verihub-mntns-") as tmp:
        probe = "import sys\ntry:\n open(sys.argv[1], 'w')\nexcept OSError as e:\n sys.exit(e.errno != 30)"
        cmd = [exe, "-rm", *_prepare([Path(tmp)], False), sys.executable, "-c", probe, f"{tmp}/x"]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0 and not os.path.exists(f"{tmp}/x")


def run_sandboxed(
    argv: Sequence[str],
    *,
    limits: Limits,
    env: Mapping[str, str],
    cwd: Path,
    isolate_network: bool = True,
    loopback: bool = False,
    read_only: Sequence[Path] = (),
    writable_only: Sequence[Path] | None = None,
) -> SandboxResult:
    """Run ``argv`` with ``limits``; in its own network namespace when possible.

    ``loopback``: bring the namespace's loopback interface up (for a model server on 127.0.0.1);
    nothing outside the machine is reachable either way. ``read_only``: folders the child sees
    as a read-only mount (own mount namespace) where :func:`mount_namespace_available`; the
    result's ``read_only_mounted`` says whether that happened. ``argv[0]`` must be a path when
    either applies. ``writable_only``: with a mount namespace, every other folder (but /proc, /sys
    and /dev) is read-only too, whatever writes to it (a child process, ctypes).
    """
    isolated = isolate_network and network_namespace_available()
    mounted = (bool(read_only) or writable_only is not None) and mount_namespace_available()
    own_pids = pid_namespace_available()
    cmd = list(argv)
    if isolated or mounted or own_pids:
        flags = "-r" + ("n" if isolated else "") + ("m" if mounted else "") + ("pf" if own_pids else "")
        ro = list(read_only) if mounted else []
        up = loopback and isolated
        rw = writable_only if mounted else None
        prep = _prepare(ro, up, own_pids, rw) if ro or up or own_pids or rw is not None else []
        # a fresh /proc: the package sees only its own processes, not the environ of the others
        new_proc = ["--mount-proc"] if own_pids and mounted else []
        cmd = ["unshare", flags, *new_proc, *prep, *argv]
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
        returncode=proc.returncode,
        stdout=out,
        stderr=err,
        timed_out=timed_out,
        network_isolated=isolated,
        read_only_mounted=mounted,
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
