"""Where an environment's data came from: a sink that dataset loaders report into.

:func:`recording_sources` opens a sink for the duration of a block (``verihub eval`` opens one
around loading the environment); :func:`record_source` is what a loader (``hub.registry.data``)
calls for each dataset it reads. It lives in ``hub.env`` so that the sandbox's environment
server, which may import nothing above ``hub.env``, can collect the same record inside the
sandbox and send it back with the environment's description.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["record_source", "recording_sources", "rows_sha256"]

_SOURCES: ContextVar[list[dict[str, Any]] | None] = ContextVar("verihub_data_sources", default=None)


@contextlib.contextmanager
def recording_sources() -> Iterator[list[dict[str, Any]]]:
    """Collect the provenance of every dataset loaded inside the block."""
    sink: list[dict[str, Any]] = []
    token = _SOURCES.set(sink)
    try:
        yield sink
    finally:
        _SOURCES.reset(token)


def rows_sha256(rows: list[dict[str, Any]]) -> str:
    """A hash of the rows' content (canonical JSON, one line per row)."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, default=str, ensure_ascii=False).encode())
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def record_source(entry: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Report one loaded dataset (``entry`` says where from) to the open sink, if any."""
    sink = _SOURCES.get()
    if sink is not None:
        sink.append({**entry, "n_rows": len(rows), "rows_sha256": rows_sha256(rows)})
