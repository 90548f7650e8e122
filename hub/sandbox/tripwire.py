"""An audit hook inside the sandbox that notes what the walls already stop.

bubblewrap makes the host's files absent and the network unreachable; this hook records the
attempts (an open outside the allowed folders, a connect, a process the package starts) so
that ``verihub check`` can name them. It is a tripwire, not a wall: code in the same process
can evade it, and nothing relies on it for safety.
"""

from __future__ import annotations

import os
import socket
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["Tripwire"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# audit event -> index of its argv (or command) argument
_SPAWN_EVENTS = {"subprocess.Popen": 1, "os.system": 0, "os.exec": 1, "os.posix_spawn": 1, "os.spawn": 2}
_FIXED_READ = (
    "/dev/null",
    "/dev/urandom",
    "/etc/localtime",
    "/usr/share/zoneinfo",
    "/etc/ssl",
    "/proc/self",
    "/proc/sys/kernel/random",
)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class Tripwire:
    """Call :meth:`install` once; :meth:`drain` returns (and forgets) what was seen."""

    def __init__(self, read: Iterable[str], write: Iterable[str], trusted: Iterable[str]) -> None:
        roots = {*read, *_FIXED_READ}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            roots.add(sysconfig.get_paths()[key])
        roots.update((sys.prefix, sys.base_prefix, sys.exec_prefix))
        self.read = sorted({os.path.realpath(p) for p in roots} | {os.path.abspath(p) for p in roots})
        self.write = sorted({os.path.realpath(p) for p in write})
        self.trusted = tuple(os.path.realpath(p) + os.sep for p in trusted)
        self.stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
        self.seen: dict[str, dict[str, str]] = {}
        self.phase = "load"
        self.active = False

    def install(self) -> None:
        sys.addaudithook(self)
        self.active = True

    def drain(self) -> list[dict[str, str]]:
        out = list(self.seen.values())
        self.seen = {}
        return out

    def _report(self, kind: str, detail: str) -> None:
        key = f"{kind}:{detail}"
        if key not in self.seen and len(self.seen) < 200:
            self.seen[key] = {"kind": kind, "detail": detail, "phase": self.phase}

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            self._open(args)
        elif event in ("socket.connect", "socket.sendto"):
            family = getattr(args[0], "family", None)
            if family in (socket.AF_INET, socket.AF_INET6):
                self._report("network", f"{event.split('.')[1]} {args[1]!r}")
            elif family == socket.AF_UNIX:
                path = os.fsdecode(args[1]) if isinstance(args[1], (str, bytes)) else ""
                if not path or path.startswith("\0") or not _under(os.path.realpath(path), self.write):
                    self._report("network", f"{event.split('.')[1]} unix socket {args[1]!r}")
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
            self._report("network", f"{event.split('.')[1]} {args[0]!r}")
        elif event in _SPAWN_EVENTS and not self._started_by_verihub():
            command = args[0] if event == "os.system" else args[_SPAWN_EVENTS[event]]
            self._report("process", f"{event}: {str(command)[:120]}")

    def _started_by_verihub(self) -> bool:
        """True when the nearest caller outside the standard library is verihub's own code
        (the proof graders start coqc and Lean)."""
        frame = sys._getframe(2)
        while frame is not None:
            name = os.path.realpath(frame.f_code.co_filename)
            if not name.startswith(self.stdlib) and name != os.path.realpath(__file__):
                return name.startswith(self.trusted)
            frame = frame.f_back  # type: ignore[assignment]
        return False

    def _open(self, args: tuple[Any, ...]) -> None:
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(path, int):
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        # realpath: a symlink, /proc/self/root/... or /proc/self/cwd/... is judged by where it leads
        full = os.path.realpath(os.path.join(os.getcwd(), str(path)))
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        )
        if writing:
            if full != "/dev/null" and not _under(full, self.write):
                self._report("write", full)
        elif not (
            _under(full, self.read)
            or _under(full, self.write)
            or any(part.endswith((".dist-info", ".egg-info")) for part in Path(full).parts[:-1])
        ):
            self._report("read", full)
