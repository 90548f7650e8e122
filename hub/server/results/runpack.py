"""Unpacking a pushed run archive on the server (the client's side is :mod:`hub.client.runpack`).

:func:`unpack_run`: the compressed size is capped by ``Limits.max_upload_bytes``, the decompressed
stream (tar headers included) and the unpacked files by ``Limits.max_unpacked_bytes``, the member
count by :data:`MAX_MEMBERS`; links, folders, special files, ``..``, absolute names, duplicates,
extra and missing members are refused (:class:`hub.server.core.archive.ArchiveError`) before
anything is kept. This module needs no database.
"""

from __future__ import annotations

from pathlib import Path

from hub.client import MAX_MEMBERS, RUN_FILES
from hub.server.core import ArchiveError, Limits, unpack_archive

__all__ = ["MAX_MEMBERS", "RUN_FILES", "unpack_run"]


def unpack_run(archive: Path, dest: Path, limits: Limits) -> Path:
    """Unpack the run archive ``archive`` into the new folder ``dest``; returns ``dest``.

    Raises :class:`ArchiveError` on anything but exactly the three run files (the shared reader,
    :func:`hub.server.core.archive.unpack_archive`); on a refusal ``dest`` may hold partial files,
    so unpack into a temporary folder. No member is read after the first one refused, so at most
    :data:`MAX_MEMBERS` (three) members are ever unpacked.
    """
    dest.mkdir()
    holds = f"a run archive holds {', '.join(RUN_FILES)} only"
    seen = unpack_archive(archive, dest, limits, names=RUN_FILES, what="a run", holds=holds, bomb_ratio=False)
    missing = [name for name in RUN_FILES if name not in seen]
    if missing:
        raise ArchiveError(f"the archive has no {', '.join(missing)}; {holds}")
    return dest
