"""A cache of index pages, invalidated by a generation stamp file.

Everything that changes what the index shows (a publish, a finished review, a yank, an approval,
a re-review) calls :func:`bump` after its transaction commits; it rewrites ``DATA/generation``.
Each server process compares that file's stamp (one ``stat``) with the stamp its cached pages were
rendered under. Pages are keyed by what the requester may see (anonymous, one set of owners whose
private environments it sees, or admin), never by who it is. Processes on other machines see the
bump as long as they share the data folder (as they must, for the artifacts).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["PageCache", "bump"]

_FILE = "generation"


def bump(data: Path) -> None:
    """Mark every cached page of every process stale."""
    data.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=data, prefix=".generation-")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{time.time_ns()}\n")
    os.replace(tmp, data / _FILE)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0)
    return (st.st_ino, st.st_mtime_ns)


class PageCache:
    """(key) -> (body, media type), valid while the generation stamp is unchanged."""

    def __init__(self, data: Path, max_entries: int = 4096) -> None:
        self.path = data / _FILE
        self.max_entries = max_entries
        self._stamp = _stamp(self.path)
        self._pages: dict[tuple[str, ...], tuple[bytes, str, int]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> tuple[bytes, str, int] | None:
        stamp = _stamp(self.path)
        with self._lock:
            if stamp != self._stamp:
                self._pages.clear()
                self._stamp = stamp
                return None
            return self._pages.get(key)

    def put(self, key: tuple[str, ...], stamp_before: tuple[int, int], value: tuple[bytes, str, int]) -> None:
        """Store a page rendered under ``stamp_before`` (dropped if a bump happened meanwhile)."""
        with self._lock:
            if stamp_before == self._stamp == _stamp(self.path):
                if len(self._pages) >= self.max_entries:
                    self._pages.clear()
                self._pages[key] = value

    def stamp(self) -> tuple[int, int]:
        return _stamp(self.path)
