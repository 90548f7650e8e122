"""The bubblewrap command line of a sandbox, and whether bubblewrap works here.

Every sandbox gets every namespace unshared (the network unless the caller asks for the host's,
for trusted work only); uid and gid 65534 with every capability dropped, ``no_new_privs`` and no
nested user namespace; a root of read-only binds only (the interpreter's prefix, system
libraries, verihub's code, what the caller names); a fresh ``/proc`` and a ``/dev`` of five
device nodes with a size-capped ``/dev/shm``; a private run directory and ``/tmp``, tmpfs capped at
``disk_mb``; a scrubbed environment; its own session (no terminal to inject keystrokes into); and
death with its parent. Every option reaches bubblewrap on a descriptor (``--args FD``), so the
sandbox sees only ``bwrap --args 5 -- COMMAND`` in ``/proc/1/cmdline``. Started by root, the
sandbox joins a user namespace of :mod:`hub.sandbox.userns` so that its command is not host
uid 0. The threat model: docs/sandbox.md.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hub.sandbox.policy import Limits

__all__ = [
    "HOME",
    "HOSTNAME",
    "Plan",
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


def _pth_dirs(site_dir: Path) -> list[Path]:
    """Folders that the ``.pth`` files of ``site_dir`` add to ``sys.path`` (path lines only)."""
    out = []
    for pth in sorted(site_dir.glob("*.pth")):
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            path = Path(line) if os.path.isabs(line) else site_dir / line
            if path.is_dir():
                out.append(path)
    return out


def python_roots() -> list[Path]:
    """Folders the interpreter runs with: its prefixes (a virtualenv's and its base
    installation's), its site-packages, and the folders their ``.pth`` files add, wherever
    they are (``/tmp`` included: the sandbox's own ``/tmp`` is mounted below these binds)."""
    roots = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix)}
    sites: set[Path] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            path = Path(sysconfig.get_path(key))
        except KeyError:
            continue
        roots.add(path)
        if key in ("purelib", "platlib"):
            sites.add(path)
    for site in sites:
        if site.is_dir():
            roots.update(_pth_dirs(site))
    exe = Path(sys.executable)
    roots.add(exe.parent)
    roots.add(Path(os.path.realpath(exe)).parent)
    out: list[Path] = []
    for root in sorted({Path(os.path.realpath(r)) for r in roots} | roots, key=lambda p: len(p.parts)):
        if root.exists() and not any(root == o or o in root.parents for o in out) and str(root) != "/":
            out.append(root)
    return out


_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@dataclass
class Plan:
    """A bwrap command line in two parts: ``argv`` (what the process table shows, inside the
    sandbox too: ``/proc/1/cmdline``: bwrap, ``--args FD`` and the command) and ``args`` (every
    option, the environment's values included, handed to bwrap on that descriptor)."""

    argv: list[str]
    args: list[str] = field(default_factory=list)

    def args_bytes(self) -> bytes:
        """The ``--args`` payload: NUL-terminated arguments."""
        return b"".join(os.fsencode(a) + b"\0" for a in self.args)


def _bind_system(args: list[str]) -> None:
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _ETC:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]


def _minimal_dev(args: list[str], disk: str, perms: list[str]) -> None:
    """A /dev of five device nodes, the standard links and a size-capped /dev/shm: nothing
    writable but /dev/shm (``--dev`` would add an unsized tmpfs)."""
    for node in _DEVICES:
        if os.path.exists(node):
            args += ["--dev-bind", node, node]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "0"), ("stdout", "1"), ("stderr", "2")):
        args += ["--symlink", target if name == "fd" else f"/proc/self/fd/{target}", f"/dev/{name}"]
    args += [*perms, "--size", disk, "--tmpfs", "/dev/shm"]


#: options that create their last argument in the new root, and how many arguments they take
_DEST_OPS = {
    "--ro-bind": 2,
    "--bind": 2,
    "--dev-bind": 2,
    "--symlink": 2,
    "--tmpfs": 1,
    "--proc": 1,
    "--dir": 1,
}
_MODIFIERS = {"--perms": 1, "--size": 1}


def _with_parents(args: list[str]) -> list[str]:
    """Mount operations ``args`` with a ``--perms 0755 --dir`` before each operation for every
    missing parent of its destination: bubblewrap makes them 0700 when it runs as namespace
    root, which would shut the sandbox's user out of everything below them (``/root/...``,
    ``/home/sandbox``)."""
    out: list[str] = []
    mounted: list[str] = []  # binds so far: what is below them exists or is not ours to make
    made: set[str] = set()  # folders that exist in the new root (made here, or a tmpfs)
    pending: list[str] = []  # modifiers of the next operation
    i = 0
    while i < len(args):
        opt = args[i]
        if opt in _MODIFIERS:
            pending += args[i : i + 2]
            i += 2
            continue
        n = _DEST_OPS.get(opt)
        if n is None:
            out += [*pending, opt]
            pending = []
            i += 1
            continue
        dest = args[i + n]
        for parent in reversed(Path(dest).parents[:-1] if Path(dest).parents else []):
            p = str(parent)
            if p in made or any(p == m or p.startswith(m.rstrip("/") + "/") for m in mounted):
                continue
            out += ["--perms", "0755", "--dir", p]
            made.add(p)
        out += [*pending, *args[i : i + n + 1]]
        pending = []
        if opt in ("--tmpfs", "--dir"):
            made.add(dest)  # an empty folder: what goes below it needs its parents made
        else:
            mounted.append(dest)
        i += n + 1
    return out + pending


def bwrap_argv(
    command: Sequence[str],
    *,
    limits: Limits,
    env: Mapping[str, str],
    ro_binds: Sequence[Path] = (),
    ro_map: Sequence[tuple[Path, str]] = (),
    rw_dir: Path | None = None,
    rw_area: Path | None = None,
    network: bool = False,
    seccomp_fd: int | None = None,
    cwd: str = HOME,
    args_fd: int = 5,
    userns: tuple[int, int] | None = None,
) -> Plan:
    """The bwrap :class:`Plan` that runs ``command`` in a fresh sandbox (see the module
    docstring). ``ro_binds``: host paths the sandbox reads at the same path; ``ro_map``: (host
    path, sandbox path) pairs; ``rw_dir``: one host folder writable at the same path (for build
    outputs; the supervisor caps its size). ``env`` is the whole environment inside; it travels
    in the ``--args`` payload (descriptor ``args_fd``), never on the command line.
    ``rw_area``: a host folder that is, inside, a tmpfs of ``disk_mb`` at the same path, its host
    content readable at :data:`~hub.sandbox.rwarea.RW_IN` (see :mod:`hub.sandbox.rwarea`).
    ``userns``: (descriptor, host uid) of a namespace of :func:`hub.sandbox.userns.open_userns`,
    given where the supervisor is root: bubblewrap joins it and ``setpriv`` drops to
    :data:`SANDBOX_UID` before the command, so that the command is not host root."""
    exe = shutil.which("bwrap") or "bwrap"
    disk = str(limits.disk_mb * 1024 * 1024)
    if userns is None:
        users = ["--unshare-all", *(["--share-net"] if network else []), "--unshare-user", "--disable-userns"]
        users += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
        caps, perms, prefix = ["--cap-drop", "ALL"], [], []
    else:
        from hub.sandbox.userns import setpriv_prefix

        users = ["--userns", str(userns[0]), "--unshare-ipc", "--unshare-pid", "--unshare-uts"]
        users += ["--unshare-cgroup-try", *([] if network else ["--unshare-net"])]
        # namespace root keeps only what setpriv needs to become SANDBOX_UID for good
        caps = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        caps += ["--cap-add", "CAP_SETPCAP"]
        perms = ["--perms", "1777"]  # the tmpfs folders belong to namespace root: SANDBOX_UID writes
        prefix = setpriv_prefix(SANDBOX_UID, userns[0])
    args = [*users, "--hostname", HOSTNAME, "--die-with-parent", "--new-session", *caps, "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    # the private tmpfs folders first: a bind below /tmp (a virtualenv or a build folder there)
    # is mounted on top of them, not hidden by them
    mounts_from = len(args)  # from here on: only mount operations (no values of the caller's)
    args += ["--proc", "/proc"]
    _minimal_dev(args, disk, perms)
    args += [*perms, "--size", disk, "--tmpfs", "/tmp", *perms, "--size", disk, "--tmpfs", HOME]
    _bind_system(args)
    seen: set[str] = set()
    for root in [*python_roots(), *ro_binds]:
        path = str(root)
        if path not in seen and os.path.exists(path):
            seen.add(path)
            args += ["--ro-bind", path, path]
    for host, inside in ro_map:
        args += ["--ro-bind", str(host), inside]
    if rw_dir is not None:
        args += ["--bind", str(rw_dir), str(rw_dir)]
    if rw_area is not None:
        from hub.sandbox.rwarea import RW_IN

        args += [*perms, "--size", disk, "--tmpfs", str(rw_area), "--ro-bind", str(rw_area), RW_IN]
    if userns is not None:
        args = args[:mounts_from] + _with_parents(args[mounts_from:])
    args += ["--remount-ro", "/", "--chdir", cwd]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return Plan(argv=[exe, "--args", str(args_fd), "--", *prefix, *command], args=args)


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
    from hub.sandbox.userns import drops_root, host_ids, open_userns

    ns_fd = None
    try:
        if drops_root():
            host = host_ids()
            ns_fd = open_userns(SANDBOX_UID, host)
        userns = None if ns_fd is None else (ns_fd, host)
        probe = [sys.executable, "-c", "import os, sys; sys.exit(os.getuid() == 0)"]
        plan = bwrap_argv(probe, limits=Limits(disk_mb=1), env={}, userns=userns)
        proc = subprocess.run(
            [plan.argv[0], *plan.args, *plan.argv[3:]],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            pass_fds=() if ns_fd is None else (ns_fd,),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc}); pass --unsafe-no-sandbox to run unsandboxed"
    finally:
        if ns_fd is not None:
            os.close(ns_fd)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return (
            f"bubblewrap cannot make a sandbox here ({why}): unprivileged user namespaces may be "
            "off (sysctl kernel.unprivileged_userns_clone=1); or pass --unsafe-no-sandbox"
        )
    return None
