"""Unpacking what clients upload, refusing anything unsafe before a byte lands outside.

An upload is a gzipped tar of a submission bundle (``manifest.json``, ``dist/``, ``check/``,
``eval/`` at its top). Only regular files and folders are accepted: no absolute paths, no
``..``, no symlinks, hard links or devices. The total unpacked size, the number of members and
the compression ratio are capped (:class:`hub.server.core.config.Limits`); the wheel (a zip) and the
sdist (a tar) inside are held to the same caps before anything else reads them.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import os
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import AsyncIterator, Collection
from pathlib import Path, PurePosixPath
from typing import Any

from starlette.requests import Request

from hub.server.core.config import Limits
from hub.server.core.problems import HubProblem, Problem

__all__ = [
    "ArchiveError",
    "CappedStream",
    "check_sdist",
    "check_wheel",
    "received_body",
    "received_upload",
    "safe_member_name",
    "unpack_upload",
]


class ArchiveError(HubProblem):
    """An upload was refused."""


def safe_member_name(name: str) -> PurePosixPath:
    """The relative path of an archive member, or ArchiveError when it could escape."""
    if not name or "\x00" in name or "\\" in name:
        raise ArchiveError(f"archive member {name!r} has an unusable name")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/"):
        raise ArchiveError(f"archive member {name!r} is an absolute path")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ArchiveError(f"archive member {name!r} points outside the archive")
    return PurePosixPath(*parts)


class CappedStream(io.RawIOBase):
    """A decompressed stream that refuses to yield more than ``cap`` bytes in all: tar headers
    (a huge pax or long-name header) count too, not only the members' data."""

    def __init__(self, raw: gzip.GzipFile, cap: int) -> None:
        super().__init__()
        self.raw, self.cap, self.total = raw, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)
        self.total += n
        if self.total > self.cap:
            raise ArchiveError(f"the archive unpacks to more than {self.cap} bytes", Problem.TOO_LARGE)
        return n


@contextlib.asynccontextmanager
async def received_upload(request: Request, *, prefix: str) -> AsyncIterator[Path]:
    """The request's body, streamed into a temporary file under the upload cap (removed after).

    Raises :class:`ArchiveError` (413) when the declared or the streamed size is over
    ``Limits.max_upload_bytes``: nothing past the cap is written."""
    state = request.app.state
    cap = state.config.limits.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise ArchiveError(f"the upload is {declared} bytes; the cap is {cap}", Problem.TOO_LARGE)
    fd, name = tempfile.mkstemp(dir=state.storage.tmp, prefix=prefix, suffix=".tar.gz")
    upload = Path(name)
    try:
        size = 0
        with os.fdopen(fd, "wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise ArchiveError(f"the upload is over the cap of {cap} bytes", Problem.TOO_LARGE)
                out.write(chunk)
        yield upload
    finally:
        upload.unlink(missing_ok=True)


async def received_body(request: Request, cap: int) -> bytes:
    """A small request body, read as a stream under ``cap`` bytes. Raises :class:`ArchiveError`
    (413) on a declared ``Content-Length`` over the cap before reading anything, and stops
    reading as soon as the streamed body passes it. Authenticate before calling this."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise ArchiveError(f"the request body is {declared} bytes; the cap is {cap}", Problem.TOO_LARGE)
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise ArchiveError(f"the request body is over the cap of {cap} bytes", Problem.TOO_LARGE)
        parts.append(chunk)
    return b"".join(parts)


def _ratio_ok(unpacked: int, packed: int, limits: Limits) -> bool:
    return unpacked <= limits.ratio_floor or unpacked <= limits.max_ratio * max(packed, 1)


def unpack_upload(archive: Path, dest: Path, limits: Limits) -> Path:
    """Unpack the uploaded ``archive`` into the empty folder ``dest``; returns ``dest``."""
    unpack_archive(archive, dest, limits)
    return dest


def _kind(member: tarfile.TarInfo) -> str:
    return "symlink" if member.issym() else "hard link" if member.islnk() else "special file"


def unpack_archive(
    archive: Path,
    dest: Path,
    limits: Limits,
    *,
    names: Collection[str] | None = None,
    what: str = "this archive",
    holds: str = "",
    bomb_ratio: bool = True,
) -> list[str]:
    """The one safe reader of a gzipped tar: unpack ``archive`` into the folder ``dest``; returns
    the files written, in archive order.

    The archive is read as one stream through the caps of ``limits`` (its compressed size, the
    decompressed stream with tar headers, the members' bytes, their number and, with
    ``bomb_ratio``, the expansion ratio). Every member must have a safe relative name and be a
    regular file (or a folder, unless ``names`` is given); with ``names``, only those files, each
    once (``what`` names such an archive and ``holds`` says what it holds, for the messages).
    Files are created with ``O_EXCL | O_NOFOLLOW``. Raises :class:`ArchiveError` at the first
    refusal, before reading further; ``dest`` may then hold partial files, so unpack into a
    temporary folder.
    """
    packed = archive.stat().st_size
    if packed > limits.max_upload_bytes:
        raise ArchiveError(
            f"the upload is {packed} bytes; the cap is {limits.max_upload_bytes}", Problem.TOO_LARGE
        )
    only = f"; {holds}" if holds else ""
    written: list[str] = []
    total = members = 0
    try:  # read as a stream through the cap, so that tar headers (a huge pax header) count too
        with (
            gzip.GzipFile(archive, "rb") as raw,
            CappedStream(raw, limits.max_unpacked_bytes) as capped,
            tarfile.open(fileobj=io.BufferedReader(capped), mode="r|") as tf,
        ):
            for member in tf:
                members += 1
                if members > limits.max_members:
                    raise ArchiveError(
                        f"the archive has more than {limits.max_members} members", Problem.TOO_LARGE
                    )
                rel = safe_member_name(member.name)
                if member.isdir() and names is None:
                    (dest / rel).mkdir(parents=True, exist_ok=True)
                    continue
                if member.isdir():
                    raise ArchiveError(f"archive member {member.name!r} is a folder{only}")
                if not member.isreg():
                    raise ArchiveError(
                        f"archive member {member.name!r} is a {_kind(member)}; only regular files are allowed"
                    )
                if names is not None and member.name not in names:
                    raise ArchiveError(f"archive member {member.name!r} is not part of {what}{only}")
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(member)
                if src is None:  # pragma: no cover - regular members always have data
                    raise ArchiveError(f"cannot read archive member {member.name!r}")
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as out:
                    for chunk in iter(functools.partial(src.read, 1 << 20), b""):
                        total += len(chunk)
                        if total > limits.max_unpacked_bytes:
                            raise ArchiveError(
                                f"the archive unpacks to more than {limits.max_unpacked_bytes} bytes",
                                Problem.TOO_LARGE,
                            )
                        if bomb_ratio and not _ratio_ok(total, packed, limits):
                            raise ArchiveError(
                                f"the archive expands more than {limits.max_ratio:g}x (an archive bomb?)",
                                Problem.TOO_LARGE,
                            )
                        out.write(chunk)
                written.append(rel.as_posix())
    except FileExistsError as exc:
        raise ArchiveError(f"the archive lists {Path(str(exc.filename)).name} twice") from exc
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"the upload is not a gzipped tar archive ({type(exc).__name__})") from exc
    return written


def check_wheel(path: Path, limits: Limits) -> None:
    """Refuse a wheel with unsafe names, links, or bomb-like sizes (before it is unpacked)."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"{path.name} is not a zip file") from exc
    if len(infos) > limits.max_members:
        raise ArchiveError(f"{path.name} has more than {limits.max_members} files", Problem.TOO_LARGE)
    total = 0
    for info in infos:
        safe_member_name(info.filename.rstrip("/") or info.filename)
        mode = info.external_attr >> 16
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):  # 0: no type recorded
            raise ArchiveError(f"{path.name}: {info.filename!r} is not a plain file")
        total += info.file_size
    if total > limits.max_unpacked_bytes or not _ratio_ok(total, path.stat().st_size, limits):
        raise ArchiveError(f"{path.name} unpacks to {total} bytes (over the caps)", Problem.TOO_LARGE)


def check_sdist(path: Path, limits: Limits) -> None:
    """Refuse an sdist with unsafe members or bomb-like sizes (reads headers only)."""
    total = 0
    try:
        with tarfile.open(path, mode="r:gz") as tf:
            for n, member in enumerate(tf, 1):
                if n > limits.max_members:
                    raise ArchiveError(
                        f"{path.name} has more than {limits.max_members} members", Problem.TOO_LARGE
                    )
                safe_member_name(member.name)
                if not (member.isreg() or member.isdir()):
                    raise ArchiveError(f"{path.name}: {member.name!r} is not a plain file")
                total += member.size
                if total > limits.max_unpacked_bytes or not _ratio_ok(total, path.stat().st_size, limits):
                    raise ArchiveError(f"{path.name} unpacks to more than the caps allow", Problem.TOO_LARGE)
    except (tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{path.name} is not a gzipped tar archive") from exc
