"""The archive of a pushed run (``verihub results push``): what is sent, and how it is unpacked.

A run archive is a gzipped tar whose members are exactly ``config.json``, ``rollouts.jsonl`` and
``summary.json`` at its top, as regular files: nothing else of the run directory is sent (no
lock, no ``failed_attempts.jsonl``, no viewer page). :func:`pack_run` writes one on the client
after :func:`check_run_dir` found the run complete and consistent (the leaderboard's own
verification, so a run the hub would refuse is refused before it is uploaded).

:func:`unpack_run` is the server side: the compressed size is capped by
``Limits.max_upload_bytes``, the decompressed stream (tar headers included) and the unpacked
files by ``Limits.max_unpacked_bytes``, the member count by :data:`MAX_MEMBERS`; links, folders,
special files, ``..``, absolute names, duplicates, extra and missing members are refused
(:class:`hub.server.archive.ArchiveError`) before anything is kept. This module needs no
database, so clients without the hub server's extras can use it.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import tarfile
import zlib
from pathlib import Path

from hub.env.errors import UsageError
from hub.run import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunDir
from hub.server.archive import ArchiveError, CappedStream
from hub.server.config import Limits

__all__ = ["MAX_MEMBERS", "RUN_FILES", "check_run_dir", "pack_run", "unpack_run"]

#: The files of a run that are sent, in archive order.
RUN_FILES = (CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE)

#: The most members an archive may have: the run files, each once (the exact-name rule is the cap).
MAX_MEMBERS = len(RUN_FILES)


def check_run_dir(run_dir: Path) -> None:
    """Raise :class:`UsageError` unless ``run_dir`` is a finished run the hub would accept.

    The checks are :func:`leaderboard.verify_run`'s (every rollout present once, each record
    consistent, ``summary.json`` equal to the one recomputed from the rollouts, the environment
    version and content hash named), so a refusal here is what the hub would answer.
    """
    from leaderboard.verify import RunRejected, verify_run

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a run directory")
    missing = [name for name in RUN_FILES if not (run_dir / name).is_file()]
    if missing:
        hint = (
            f"an unfinished run? finish it with `verihub eval --resume {run_dir}`"
            if (run_dir / CONFIG_FILE).is_file()
            else "a run directory is what `verihub eval --out DIR` writes"
        )
        raise UsageError(f"{run_dir} cannot be pushed: it has no {', '.join(missing)} ({hint})")
    holder = RunDir(run_dir).writer_holder()
    if holder is not None:
        raise UsageError(f"{run_dir} is being written by {holder.describe()}; push it once that run ends")
    try:
        verify_run(run_dir)
    except RunRejected as exc:
        raise UsageError(f"{run_dir} cannot be pushed: {'; '.join(exc.reasons)}") from None


def pack_run(run_dir: Path, out: Path) -> Path:
    """Write the run archive of ``run_dir`` to ``out`` (its three files only); returns ``out``."""
    for name in RUN_FILES:
        path = run_dir / name
        if path.is_symlink() or not path.is_file():
            raise UsageError(f"{path} is not a regular file; a run archive holds the run's files only")
    with tarfile.open(out, "w:gz") as tf:
        for name in RUN_FILES:
            info = tf.gettarinfo(str(run_dir / name), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = 0o644
            with (run_dir / name).open("rb") as fh:
                tf.addfile(info, fh)
    return out


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
        raise ArchiveError(f"the upload is {packed} bytes; the cap is {limits.max_upload_bytes}", 413)
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
                                f"the archive unpacks to more than {limits.max_unpacked_bytes} bytes", 413
                            )
                        out.write(chunk)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"the upload is not a gzipped tar archive ({type(exc).__name__})") from exc
    missing = [name for name in RUN_FILES if name not in seen]
    if missing:
        raise ArchiveError(f"the archive has no {', '.join(missing)}; a run archive holds {_files()}")
    return dest
