"""Each pushed run's rollouts as rows of the ``rollouts`` table (:class:`RunRollout`), so that a run
page shows one page of them without reading the run's archive.

:func:`store_rollouts` reads the run's stored archive (a gzipped tar that
:func:`hub.server.results.runpack.unpack_run` and :func:`leaderboard.verify_run` accepted at push) as
a stream and adds one row per line of ``rollouts.jsonl``, in batches, inside the caller's
transaction: ingestion calls it in the transaction that adds the run, so a run is never recorded
with half its rollouts. ``idx`` is the line's 0-based position among the file's rollouts. The row
keeps what lists filter and sort on (task, status, reward, passed, extracted answer) and the line
itself, zlib-compressed (:func:`transcript_json`). The run's ``config.json`` goes into
``Run.config``.

Runs pushed before the table existed have ``Run.rollouts_stored`` false: :func:`backfill` (the
``verihub hub backfill-rollouts`` command) fills them, one transaction per run.
"""

from __future__ import annotations

import json
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sqlalchemy import delete, insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from hub.run import CONFIG_FILE, ROLLOUTS_FILE
from hub.server.core import LocalStorage, Run, RunRollout

__all__ = [
    "BATCH",
    "ERRORED",
    "FAILED",
    "MAX_CONFIG_BYTES",
    "MAX_EXTRACTED",
    "PASSED",
    "STATUSES",
    "Backfilled",
    "backfill",
    "refresh_statistics",
    "rollout_values",
    "store_rollouts",
    "transcript_json",
]

PASSED, FAILED, ERRORED = "passed", "failed", "errored"
#: A rollout's status, as the ``status`` column stores it.
STATUSES = (PASSED, FAILED, ERRORED)
#: Extracted answers are cut to this many characters in the row (the transcript keeps them whole).
MAX_EXTRACTED = 300
#: A ``config.json`` larger than this is not kept in ``Run.config``.
MAX_CONFIG_BYTES = 1024**2
#: Rows added per INSERT.
BATCH = 500


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def rollout_values(run_id: int, idx: int, line: bytes) -> dict[str, Any]:
    """The row of the rollout on ``line`` (one JSON object, as the runner writes it)."""
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("a rollout line is not a JSON object")
    grade: dict[str, Any] = data["grade"] if isinstance(data.get("grade"), dict) else {}
    error: dict[str, Any] | None = data["error"] if isinstance(data.get("error"), dict) else None
    passed = data.get("passed") is True
    reward = data.get("reward")
    messages = data.get("messages")
    return {
        "run_id": run_id,
        "idx": idx,
        "task_id": str(data.get("task_id", "")),
        "rollout_index": int(data.get("rollout_index", 0)),
        "status": ERRORED if error is not None else PASSED if passed else FAILED,
        "error_kind": _text(error.get("kind"), 16) if error is not None else "",
        "reward": float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None,
        "passed": passed,
        "grade_status": _text(grade.get("status"), 16),
        "extracted": _text(grade.get("extracted"), MAX_EXTRACTED),
        "turns": int(data.get("turns", 0) or 0),
        "n_messages": len(messages) if isinstance(messages, list) else 0,
        "size": len(line),
        "transcript": zlib.compress(line, 6),
    }


def transcript_json(row: RunRollout) -> bytes:
    """The rollout's JSON line, as pushed."""
    return zlib.decompress(row.transcript)


def _lines(fh: IO[bytes]) -> Iterator[bytes]:
    for raw in fh:
        line = raw.strip()
        if line:
            yield line


def _insert_lines(session: Session, run_id: int, fh: IO[bytes]) -> int:
    batch: list[dict[str, Any]] = []
    n = 0
    for n, line in enumerate(_lines(fh), start=1):
        batch.append(rollout_values(run_id, n - 1, line))
        if len(batch) >= BATCH:
            session.execute(insert(RunRollout), batch)
            batch = []
    if batch:
        session.execute(insert(RunRollout), batch)
    return n


def store_rollouts(session: Session, run: Run, archive: Path) -> int:
    """Add ``run``'s rollouts from its ``archive`` and keep its config; returns how many rows.

    Runs in the caller's transaction; ``run`` must have its id (flushed)."""
    n = 0
    with tarfile.open(archive, "r|gz") as tf:
        for member in tf:
            if not member.isfile() or member.name not in (CONFIG_FILE, ROLLOUTS_FILE):
                continue
            fh = tf.extractfile(member)
            if fh is None:  # pragma: no cover - a regular file always has a reader
                continue
            if member.name == ROLLOUTS_FILE:
                n = _insert_lines(session, run.id, fh)
            elif member.size <= MAX_CONFIG_BYTES:
                run.config = fh.read().decode("utf-8", errors="replace")
    run.rollouts_stored = True
    refresh_statistics(session)
    return n


def refresh_statistics(session: Session) -> None:
    """On SQLite, let the query planner know the ``rollouts`` indexes' sizes (a bounded
    ``ANALYZE``, a few milliseconds): without statistics it may walk the wrong index for a filtered
    page. PostgreSQL's autovacuum keeps its own."""
    if session.get_bind().dialect.name != "sqlite":
        return
    session.execute(text("PRAGMA analysis_limit=1000"))
    session.execute(text("ANALYZE rollouts"))


@dataclass(frozen=True)
class Backfilled:
    """One run :func:`backfill` looked at: how many rollouts it stored, or why none."""

    public_id: str
    rollouts: int
    error: str = ""


def backfill(sessions: sessionmaker[Session], storage: LocalStorage) -> list[Backfilled]:
    """Store the rollouts of every run recorded before the table existed (one transaction each)."""
    with sessions() as session:
        ids = list(session.scalars(select(Run.id).where(Run.rollouts_stored.is_(False)).order_by(Run.id)))
    done = []
    for run_id in ids:
        public_id = str(run_id)
        try:
            with sessions() as session, session.begin():
                run = session.get(Run, run_id)
                if run is None or run.rollouts_stored:
                    continue
                public_id = run.public_id
                try:
                    archive = storage.path(run.archive_sha256)
                except (FileNotFoundError, ValueError):
                    done.append(Backfilled(public_id, 0, "the run's archive is missing from the store"))
                    continue
                session.execute(delete(RunRollout).where(RunRollout.run_id == run.id))
                n = store_rollouts(session, run, archive)
        except (OSError, tarfile.TarError, TypeError, ValueError, zlib.error) as exc:  # rolled back
            done.append(Backfilled(public_id, 0, f"unreadable archive: {exc}"))
            continue
        done.append(Backfilled(public_id, n))
    return done
