"""A writable folder whose size is capped when it is written, not when it is next measured.

:func:`hub.sandbox.process.run`'s ``rw_dir`` is, inside the sandbox, a tmpfs of ``disk_mb`` at
the same path (a write past it fails with ``ENOSPC``, however many processes write at once),
filled with a copy of the host folder (bound read-only at :data:`RW_IN`). A small program of
ours (:data:`CHILD`) copies it in, runs the command and, once the command has ended, sends the
folder back as a tar stream on a pipe. Outside, :class:`Receiver` keeps at most the cap of that
stream, and :func:`extract` writes back its directories and regular files only (no links, no
devices, no path leaving the folder, nothing through an existing link), whatever the stream
says: the program inside runs beside the package's code and is trusted no more than it.
"""

from __future__ import annotations

import os
import stat
import tarfile
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import IO

__all__ = ["CHILD", "RW_IN", "AreaError", "Receiver", "extract", "wrap"]

RW_IN = "/opt/verihub/rw-in"
CHILD = r"""
import os, shutil, subprocess, sys, tarfile
area, source, cwd, fd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
argv = sys.argv[6:]
for name in os.listdir(source):  # entry by entry: the area's own top folder is not ours to chmod
    src, dst = os.path.join(source, name), os.path.join(area, name)
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)
code = subprocess.call(argv, cwd=cwd, pass_fds=())
with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w|") as tar:
    for dirpath, dirnames, filenames in os.walk(area):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                tar.add(path, arcname=os.path.relpath(path, area), recursive=False)
sys.exit(code if code >= 0 else 128 - code)
"""


class AreaError(RuntimeError):
    """The folder sent back is refused (too large, or not a plain tree of files)."""


def wrap(argv: list[str], python: str, area: Path, cwd: str, fd: int) -> list[str]:
    """The command that runs ``argv`` in ``area`` (see the module docstring)."""
    return [python, "-I", "-c", CHILD, str(area), RW_IN, cwd, str(fd), "--", *argv]


class Receiver:
    """Reads the tar stream from ``fd`` in a thread into a temporary file, keeping at most
    ``cap`` bytes (past it the rest is read and dropped, and :attr:`overflow` is set)."""

    def __init__(self, fd: int, cap: int) -> None:
        self.cap = cap
        self.overflow = False
        self.file: IO[bytes] = tempfile.TemporaryFile()
        self._fd = fd
        self._thread = threading.Thread(target=self._read, name="verihub-sandbox-area", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        size = 0
        try:
            while chunk := os.read(self._fd, 1 << 16):
                size += len(chunk)
                if size > self.cap:
                    self.overflow = True
                    continue
                self.file.write(chunk)
        except OSError:
            pass
        finally:
            os.close(self._fd)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def close(self) -> None:
        self.file.close()


def _safe_parts(name: str) -> tuple[str, ...]:
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or any(p in ("..", "") for p in parts):
        raise AreaError(f"the sandbox sent back a path outside its folder: {name[:200]!r}")
    return tuple(p for p in parts if p != ".")


def _real_dir(root: Path, parts: tuple[str, ...]) -> Path:
    """``root/parts``, made as directories, none of them a link."""
    here = root
    for part in parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            here.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            raise AreaError(f"the sandbox sent back a folder where the host has no folder: {part!r}")
    return here


def extract(stream: IO[bytes], root: Path, cap: int) -> int:
    """Write the tar ``stream``'s folders and regular files into ``root``; returns the bytes
    written. Raises :class:`AreaError` on anything else, or past ``cap`` bytes."""
    stream.seek(0)
    written = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                if not member.name:
                    continue
                parts = _safe_parts(member.name)
                if not parts:
                    continue
                if member.isdir():
                    _real_dir(root, parts)
                    continue
                if not member.isreg():
                    raise AreaError(f"the sandbox sent back something not a file: {member.name[:200]!r}")
                written += member.size
                if written > cap:
                    raise AreaError(f"the sandbox's folder holds more than {cap // 2**20} MiB")
                parent = _real_dir(root, parts[:-1])
                src = tar.extractfile(member)
                assert src is not None
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(parent / parts[-1], flags, 0o644 | (member.mode & 0o111))
                with os.fdopen(fd, "wb") as out:
                    while chunk := src.read(1 << 16):
                        out.write(chunk)
    except (tarfile.TarError, OSError) as exc:
        raise AreaError(f"the sandbox's folder cannot be taken back: {exc}") from exc
    return written
