"""The content-addressed artifact store: every file is kept once, named by its sha256.

:class:`Storage` is the interface (so an object store can be added later);
:class:`LocalStorage` keeps blobs under ``DIR/blobs/ab/cdef...``. A blob is written to a
temporary file in the same folder tree, fsynced and renamed into place, so a crash never
leaves a partial blob under a final name. Blobs no database row refers to (a push killed
between storing and committing) are harmless and can be removed by :meth:`LocalStorage.sweep`.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

__all__ = ["LocalStorage", "Storage", "sha256_file"]

_HEX = re.compile(r"^[0-9a-f]{64}$")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Storage(Protocol):
    """Where the hub keeps files (wheels, sdists, bundles, metadata)."""

    def put_file(self, path: Path) -> str:
        """Store a copy of ``path``; returns its hex sha256."""
        ...

    def put_bytes(self, data: bytes) -> str:
        """Store ``data``; returns its hex sha256."""
        ...

    def path(self, sha256: str) -> Path:
        """A local path to read the blob from (raises FileNotFoundError when absent)."""
        ...

    def exists(self, sha256: str) -> bool: ...


class LocalStorage:
    """Blobs in a folder on this machine."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.tmp = self.root / "tmp"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)

    def _final(self, sha256: str) -> Path:
        if not _HEX.match(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.blobs / sha256[:2] / sha256[2:]

    def _commit(self, tmp: Path, sha256: str) -> str:
        final = self._final(sha256)
        if final.exists():
            tmp.unlink()
            return sha256
        final.parent.mkdir(exist_ok=True)
        os.replace(tmp, final)
        return sha256

    def put_file(self, path: Path) -> str:
        digest = hashlib.sha256()
        fd, name = tempfile.mkstemp(dir=self.tmp, prefix="put-")
        with os.fdopen(fd, "wb") as out, path.open("rb") as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        return self._commit(Path(name), digest.hexdigest())

    def put_bytes(self, data: bytes) -> str:
        fd, name = tempfile.mkstemp(dir=self.tmp, prefix="put-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        return self._commit(Path(name), hashlib.sha256(data).hexdigest())

    def path(self, sha256: str) -> Path:
        final = self._final(sha256)
        if not final.is_file():
            raise FileNotFoundError(final)
        return final

    def exists(self, sha256: str) -> bool:
        return self._final(sha256).is_file()

    def sweep(self, referenced: Iterable[str]) -> list[str]:
        """Remove blobs not in ``referenced`` and stale temporary files; returns removed hashes."""
        keep = set(referenced)
        removed = []
        for blob in self.blobs.glob("??/*"):
            sha = blob.parent.name + blob.name
            if sha not in keep:
                blob.unlink()
                removed.append(sha)
        for tmp in self.tmp.iterdir():
            if tmp.is_file():
                tmp.unlink()
        return removed
