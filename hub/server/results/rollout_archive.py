"""The rollouts of a pushed run, read from its stored archive (labels, corrections, exports).

The same numbering as the rollouts table (:mod:`hub.server.results.rollout_store`).

A rollout is addressed by its *index*: its 0-based line among the non-blank lines of the run's
``rollouts.jsonl`` (the order the run wrote them). The archive was checked when it was pushed
(:mod:`hub.server.results.runpack`) and blobs never change, so the lines of the few archives read
last are kept in memory, keyed by the archive's sha256.
"""

from __future__ import annotations

import functools
import tarfile
from pathlib import Path

from hub.env import Rollout
from hub.run import RunConfig
from hub.server.core import Run, Storage

__all__ = ["rollout_count", "rollout_lines", "rollout_of", "run_config"]


@functools.lru_cache(maxsize=4)
def _members(path: str, sha256: str) -> tuple[bytes, tuple[bytes, ...]]:
    """(config.json, the non-blank rollout lines) of the archive at ``path`` (``sha256``: the key)."""
    config: bytes = b""
    lines: tuple[bytes, ...] = ()
    with tarfile.open(path, "r:gz") as tf:
        for member in tf:
            if not member.isfile() or member.name not in ("config.json", "rollouts.jsonl"):
                continue
            handle = tf.extractfile(member)
            data = handle.read() if handle is not None else b""
            if member.name == "config.json":
                config = data
            else:
                lines = tuple(ln for ln in data.splitlines() if ln.strip())
    return config, lines


def _read(storage: Storage, run: Run) -> tuple[bytes, tuple[bytes, ...]]:
    return _members(str(Path(storage.path(run.archive_sha256))), run.archive_sha256)


def rollout_lines(storage: Storage, run: Run) -> tuple[bytes, ...]:
    """The run's rollout records as stored (JSON lines, blank lines dropped)."""
    return _read(storage, run)[1]


def rollout_count(storage: Storage, run: Run) -> int:
    return len(rollout_lines(storage, run))


def rollout_of(storage: Storage, run: Run, index: int) -> Rollout | None:
    """Rollout ``index`` of ``run``, or None when the run has no such rollout."""
    lines = rollout_lines(storage, run)
    if not 0 <= index < len(lines):
        return None
    return Rollout.model_validate_json(lines[index])


def run_config(storage: Storage, run: Run) -> RunConfig:
    """The run's recorded configuration (environment, arguments, split, seed, sampling)."""
    return RunConfig.model_validate_json(_read(storage, run)[0])
