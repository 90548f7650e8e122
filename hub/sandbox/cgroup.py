"""A cgroup v2 group per sandbox, where this process may make one.

In a cgroup the kernel counts everything a sandbox holds: ``memory.max`` charges anonymous
memory, page cache and shared memory (tmpfs files, ``/dev/shm``, memfd pages) alike, and
``pids.max`` refuses a fork past the limit instead of noticing it afterwards. That needs a
writable, delegated cgroup v2 folder with the ``memory`` and ``pids`` controllers enabled for
its children: ``$VERIHUB_SANDBOX_CGROUP`` names one an operator prepared (e.g. a
``systemd-run -p Delegate=yes`` unit's leaf parent), else this process's own group is used when
it qualifies (a container's root group). Where there
is none (cgroup v1, or a folder this user may not write), :func:`open_group` returns None and the
supervisor's polling plus size-capped tmpfs folders are the limits (see
:mod:`hub.sandbox.process`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from hub.env.settings import settings

__all__ = ["CgroupGroup", "delegated_root", "open_group"]

_NEEDED = ("memory", "pids")


def _mount_point(mountinfo: str) -> Path | None:
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if sep and right.split()[0] == "cgroup2":
            return Path(left.split()[4])
    return None


def delegated_root(proc_root: Path = Path("/proc/self")) -> Path | None:
    """The cgroup v2 folder sandboxes' groups are made in, or None: ``$VERIHUB_SANDBOX_CGROUP``
    (an operator's delegated folder) or else this process's own group, when its ``memory`` and
    ``pids`` controllers are enabled for children and it is writable."""
    named = settings().sandbox_cgroup
    if named is not None:
        base = named
    else:
        try:
            mount = _mount_point((proc_root / "mountinfo").read_text(encoding="utf-8"))
            entries = (proc_root / "cgroup").read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        path = next((e.split(":", 2)[2] for e in entries if e.startswith("0::")), None)
        if mount is None or path is None:
            return None
        base = mount / path.lstrip("/")
    try:
        enabled = (base / "cgroup.subtree_control").read_text(encoding="ascii").split()
    except OSError:
        return None
    if all(c in enabled for c in _NEEDED) and os.access(base, os.W_OK):
        return base
    return None


class CgroupGroup:
    """One sandbox's group: made with its limits, entered by the sandbox's first process
    (:meth:`procs_path` written from between fork and exec), killed and removed by
    :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_path(self) -> str:
        return str(self.path / "cgroup.procs")

    def _read(self, name: str) -> str:
        try:
            return (self.path / name).read_text(encoding="ascii")
        except OSError:
            return ""

    def memory_bytes(self) -> int:
        """Bytes charged to the group now (shared memory and tmpfs files included)."""
        text = self._read("memory.current").strip()
        return int(text) if text.isdigit() else 0

    def oom_kills(self) -> int:
        """How many processes the kernel killed for passing ``memory.max``."""
        for line in self._read("memory.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def pids_refused(self) -> int:
        """How many forks ``pids.max`` refused."""
        for line in self._read("pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    def close(self) -> None:
        """Kill what is left in the group and remove it."""
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1", encoding="ascii")
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                with contextlib.suppress(OSError):
                    for pid in self._read("cgroup.procs").split():
                        os.kill(int(pid), 9)
                os.sched_yield()


def open_group(memory_bytes: int, pids: int, root: Path | None = None) -> CgroupGroup | None:
    """A fresh group under ``root`` (default: :func:`delegated_root`) with ``memory.max``
    (swap off) and ``pids.max`` set, or None when no cgroup v2 group can be made here."""
    base = root if root is not None else delegated_root()
    if base is None:
        return None
    path = base / f"verihub-sandbox-{secrets.token_hex(6)}"
    try:
        path.mkdir()
    except OSError:
        return None
    group = CgroupGroup(path)
    try:
        (path / "memory.max").write_text(str(memory_bytes), encoding="ascii")
        (path / "pids.max").write_text(str(pids), encoding="ascii")
        with contextlib.suppress(OSError):  # absent without swap accounting
            (path / "memory.swap.max").write_text("0", encoding="ascii")
    except OSError:
        group.close()
        return None
    return group
