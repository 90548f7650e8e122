"""The re-verification queue of pushed runs, kept in the ``runs`` table (``Run.verify_*``).

Every pushed run starts ``pending``. A worker claims the oldest pending run whose lease is unset
or ran out (its worker died), through the same lease queue as review jobs
(:mod:`hub.server.core.leases`). A claimed run stays
``pending`` (the schema has no running state): ``verify_worker`` and ``verify_lease_until`` say who
holds it until when, and :func:`heartbeat` pushes the lease forward while the regrade runs. A run
claimed more than :data:`MAX_ATTEMPTS` times without finishing ends in ``error`` with that reason.

:func:`finish` records ``verified``, ``unverified`` or ``error`` with the JSON report the
re-verification child wrote (:mod:`hub.server.results.reverify_child`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_
from sqlalchemy.orm import Session, sessionmaker

from hub.server.core import (
    PENDING,
    UNVERIFIED,
    VERIFIED,
    VERIFY_ERROR,
    Queue,
    Run,
    Storage,
    claim_next,
    extend,
    utcnow,
)

__all__ = [
    "MAX_ATTEMPTS",
    "OUTCOMES",
    "QUEUE",
    "TIMEOUT_S",
    "RunClaim",
    "claim",
    "finish",
    "heartbeat",
    "missing_blob",
]

MAX_ATTEMPTS = 3
#: The longest one re-verification may run before the worker kills it (seconds).
TIMEOUT_S = 1800.0
#: The states :func:`finish` may record.
OUTCOMES = (VERIFIED, UNVERIFIED, VERIFY_ERROR)


@dataclass(frozen=True)
class RunClaim:
    """A run this worker now holds. ``wheel_sha256`` is '' when its version has no wheel."""

    run_id: int
    public_id: str
    attempt: int
    archive_sha256: str
    wheel_sha256: str
    wheel_filename: str


QUEUE = Queue(
    model=Run,
    claimable=lambda now: and_(
        Run.verify_state == PENDING,
        or_(Run.verify_lease_until.is_(None), Run.verify_lease_until < now),
    ),
    held=lambda worker: and_(Run.verify_worker == worker, Run.verify_state == PENDING),
    worker=Run.verify_worker,
    attempts=Run.verify_attempts,
    lease_until=Run.verify_lease_until,
)
"""Pushed runs as a lease queue (:mod:`hub.server.core.leases`)."""


def _record(session: Session, run: Run, state: str, report: dict[str, Any]) -> None:
    run.verify_state = state
    run.verify_report = json.dumps(report)
    run.verify_lease_until = None
    run.verified_at = utcnow()


def claim(sessions: sessionmaker[Session], worker: str, lease_s: float) -> RunClaim | None:
    """Take the next pending run, or None when there is none."""
    while True:
        with sessions() as session, session.begin():
            run = claim_next(session, QUEUE, worker, lease_s)
            if run is None:
                return None
            if run.verify_attempts > MAX_ATTEMPTS:
                reason = (
                    f"the re-verification stopped unfinished {MAX_ATTEMPTS} times (worker crash or timeout)"
                )
                _record(session, run, VERIFY_ERROR, {"error": reason, "attempt": run.verify_attempts})
                continue
            wheel = next((f for f in run.version.files if f.kind == "wheel"), None)
            return RunClaim(
                run.id,
                run.public_id,
                run.verify_attempts,
                run.archive_sha256,
                wheel.sha256 if wheel is not None else "",
                wheel.filename if wheel is not None else "",
            )


def heartbeat(sessions: sessionmaker[Session], claim: RunClaim, worker: str, lease_s: float) -> bool:
    """Extend the lease; False when the run is no longer this worker's."""
    with sessions() as session, session.begin():
        return extend(session, QUEUE, claim.run_id, worker, lease_s)


def finish(
    sessions: sessionmaker[Session], claim: RunClaim, worker: str, *, state: str, report: dict[str, Any]
) -> bool:
    """Record the outcome; False (nothing recorded) when the lease was lost to another worker."""
    if state not in OUTCOMES:
        raise ValueError(f"not a re-verification outcome: {state!r}")
    with sessions() as session, session.begin():
        run = session.get(Run, claim.run_id)
        if run is None or run.verify_worker != worker or run.verify_state != PENDING:
            return False
        if run.verify_attempts != claim.attempt:  # this worker's lease ran out and it claimed again
            return False
        _record(session, run, state, report)
        return True


def missing_blob(storage: Storage, claim: RunClaim) -> str | None:
    """Why the run cannot be re-verified from the artifact store (None when both blobs are there)."""
    if not storage.exists(claim.archive_sha256):
        return f"the run's archive blob {claim.archive_sha256} is missing from the artifact store"
    if not claim.wheel_sha256:
        return "the run's environment version has no wheel to grade with"
    if not storage.exists(claim.wheel_sha256):
        return f"the version's wheel blob {claim.wheel_sha256} is missing from the artifact store"
    return None
