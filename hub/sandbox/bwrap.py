"""The bubblewrap command line of a sandbox, and whether bubblewrap works here.

Every sandbox gets: new user, pid, ipc, uts, net (unless the caller asks for the host network,
for trusted work only), mount and cgroup namespaces (``--unshare-all``); uid and gid 65534
(nobody) inside, with every capability dropped and no way back (bubblewrap sets
``no_new_privs``; ``--disable-userns`` forbids a nested user namespace); a root filesystem of
nothing but read-only binds of the interpreter's prefix, the system libraries, verihub's own
code and what the caller names; a fresh ``/proc`` and ``/dev`` (with a private, size-capped
``/dev/shm``); a private run directory and ``/tmp``, each a tmpfs capped at ``disk_mb``; a fixed
host name; a scrubbed environment (``--clearenv`` plus what the caller sets); its own session
(``--new-session``: no terminal to inject keystrokes into); and death with its parent.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

from hub.sandbox.policy import Limits

__all__ = [
    "HOME",
    "HOSTNAME",
    "SANDBOX_GID",
    "SANDBOX_UID",
    "bwrap_argv",
    "python_roots",
    "unavailable_reason",
]

SANDBOX_UID = 65534
SANDBOX_GID = 65534
HOSTNAME = "verihub-sandbox"
HOME = "/home/sandbox"  # the private run directory, and the working directory
# system folders bound read-only when they exist (symlinks are recreated as symlinks)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/ssl/certs")


def python_roots() -> list[Path]:
    """Folders the interpreter needs: its prefixes and site-packages (a venv's included)."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            roots.add(Path(sysconfig.get_path(key)))
        except KeyError:
            continue
    exe = Path(sys.executable)
    roots.add(exe.parent)
    out: list[Path] = []
    for root in sorted({Path(os.path.realpath(r)) for r in roots} | roots, key=lambda p: len(p.parts)):
        if root.exists() and not any(root == o or o in root.parents for o in out) and str(root) != "/":
            out.append(root)
    return out


def _bind_system(argv: list[str]) -> None:
    for path in _SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _ETC:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]


def bwrap_argv(
    command: Sequence[str],
    *,
    limits: Limits,
    env: Mapping[str, str],
    ro_binds: Sequence[Path] = (),
    ro_map: Sequence[tuple[Path, str]] = (),
    rw_dir: Path | None = None,
    network: bool = False,
    seccomp_fd: int | None = None,
    cwd: str = HOME,
) -> list[str]:
    """The ``bwrap`` argv that runs ``command`` in a fresh sandbox (see the module docstring).

    ``ro_binds``: host paths the sandbox reads at the same path; ``ro_map``: (host path,
    sandbox path) pairs; ``rw_dir``: one host folder writable at the same path (for build
    outputs; the supervisor caps its size). ``env`` is the whole environment inside.
    """
    exe = shutil.which("bwrap") or "bwrap"
    disk = str(limits.disk_mb * 1024 * 1024)
    argv = [
        exe,
        "--unshare-all",
        *(["--share-net"] if network else []),
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--hostname",
        HOSTNAME,
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    # the private tmpfs folders first: a bind below /tmp (a virtualenv or a build folder there)
    # is mounted on top of them, not hidden by them
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", disk, "--tmpfs", "/dev/shm"]
    argv += ["--size", disk, "--tmpfs", "/tmp", "--size", disk, "--tmpfs", HOME]
    _bind_system(argv)
    seen: set[str] = set()
    for root in [*python_roots(), *ro_binds]:
        path = str(root)
        if path not in seen and os.path.exists(path):
            seen.add(path)
            argv += ["--ro-bind", path, path]
    for host, inside in ro_map:
        argv += ["--ro-bind", str(host), inside]
    if rw_dir is not None:
        argv += ["--bind", str(rw_dir), str(rw_dir)]
    argv += ["--remount-ro", "/", "--chdir", cwd]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", *command]


@functools.cache
def unavailable_reason() -> str | None:
    """Why no sandbox can be made here (one line saying what to do), or None when it can."""
    if sys.platform != "linux":
        return "the sandbox needs Linux (bubblewrap and user namespaces)"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed: apt-get install bubblewrap (or pass --unsafe-no-sandbox)"
    try:
        from hub.sandbox.policy import seccomp_filter_fd

        os.close(seccomp_filter_fd())
    except OSError as exc:
        return f"{exc} (or pass --unsafe-no-sandbox)"
    argv = bwrap_argv([sys.executable, "-c", "pass"], limits=Limits(disk_mb=1), env={})
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc}); pass --unsafe-no-sandbox to run unsandboxed"
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return (
            f"bubblewrap cannot make a sandbox here ({why}): unprivileged user namespaces may be "
            "off (sysctl kernel.unprivileged_userns_clone=1); or pass --unsafe-no-sandbox"
        )
    return None
