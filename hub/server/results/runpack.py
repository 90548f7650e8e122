"""Unpacking a pushed run archive on the server (the client's side is :mod:`hub.client.runpack`).

:func:`unpack_run`: the compressed size is capped by ``Limits.max_upload_bytes``, the decompressed
stream (tar headers included) and the unpacked files by ``Limits.max_unpacked_bytes``, the member
count by :data:`MAX_MEMBERS`; links, folders, special files, ``..``, absolute names, duplicates,
extra and missing members are refused (:class:`hub.server.core.archive.ArchiveError`) before
anything is kept. This module needs no database.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import tarfile
import zlib
from pathlib import Path

from hub.client.runpack import MAX_MEMBERS, RUN_FILES
from hub.server.core.archive import ArchiveError, CappedStream
from hub.server.core.config import Limits
from hub.server.core.problems import Problem

__all__ = ["MAX_MEMBERS", "RUN_FILES", "unpack_run"]


def _member_name(member: tarfile.TarInfo) -> str:
    name = member.name
    if not name or "\x00" in name or "\\" in name:
        raise ArchiveError(f"archive member {name!r} has an unusable name")
    if name.startswith("/"):
        raise ArchiveError(f"archive member {name!r} is an absolute path")
    if ".." in name.split("/"):
        raise ArchiveError(f"archive member {name!r} points outside the archive")
    if member.isdir():
        raise ArchiveError(f"archive member {name!r} is a folder; a run archive holds {_files()} only")
    if not member.isreg():
        kind = "symlink" if member.issym() else "hard link" if member.islnk() else "special file"
        raise ArchiveError(f"archive member {name!r} is a {kind}; only regular files are allowed")
    if name not in RUN_FILES:
        raise ArchiveError(
            f"archive member {name!r} is not part of a run; a run archive holds {_files()} only"
        )
    return name


def _files() -> str:
    return ", ".join(RUN_FILES)


def unpack_run(archive: Path, dest: Path, limits: Limits) -> Path:
    """Unpack the run archive ``archive`` into the new folder ``dest``; returns ``dest``.

    Raises :class:`ArchiveError` (400, or 413 for a cap) on anything but exactly the three run
    files; on a refusal ``dest`` may hold partial files, so unpack into a temporary folder. The
    archive is read as a stream and no member is read after the first one refused, so at most
    :data:`MAX_MEMBERS` (three) members are ever unpacked.
    """
    packed = archive.stat().st_size
    if packed > limits.max_upload_bytes:
        raise ArchiveError(
            f"the upload is {packed} bytes; the cap is {limits.max_upload_bytes}", Problem.TOO_LARGE
        )
    dest.mkdir()
    seen: list[str] = []
    total = 0
    try:
        with (
            gzip.GzipFile(archive, "rb") as raw,
            CappedStream(raw, limits.max_unpacked_bytes) as capped,
            tarfile.open(fileobj=io.BufferedReader(capped), mode="r|") as tf,
        ):
            for member in tf:
                name = _member_name(member)
                if name in seen:
                    raise ArchiveError(f"the archive lists {name} twice")
                seen.append(name)
                src = tf.extractfile(member)
                if src is None:  # pragma: no cover - regular members always have data
                    raise ArchiveError(f"cannot read archive member {name!r}")
                fd = os.open(dest / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as out:
                    for chunk in iter(functools.partial(src.read, 1 << 20), b""):
                        total += len(chunk)
                        if total > limits.max_unpacked_bytes:
                            raise ArchiveError(
                                f"the archive unpacks to more than {limits.max_unpacked_bytes} bytes",
                                Problem.TOO_LARGE,
                            )
                        out.write(chunk)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"the upload is not a gzipped tar archive ({type(exc).__name__})") from exc
    missing = [name for name in RUN_FILES if name not in seen]
    if missing:
        raise ArchiveError(f"the archive has no {', '.join(missing)}; a run archive holds {_files()}")
    return dest
