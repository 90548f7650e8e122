"""The review queue, kept in the database.

A worker claims the oldest job that is queued, or running with an expired lease (its worker
died: ``kill -9``, a lost machine), through the lease queue of :mod:`hub.server.core.leases`.
While a review runs, its worker pushes ``lease_until`` forward (:func:`heartbeat`). A job that
was claimed ``MAX_ATTEMPTS`` times without finishing is failed with that explanation.

A finished review stores on its version the verifier card the review's own check measured
(:func:`measured_card`); nothing the package or its bundle says about itself is read for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_
from sqlalchemy.orm import Session, sessionmaker

from hub.server.core import (
    FAILED,
    PASSED,
    QUEUED,
    REVIEW_ERROR,
    RUNNING,
    Job,
    Queue,
    Version,
    claim_next,
    extend,
    utcnow,
)

__all__ = ["MAX_ATTEMPTS", "QUEUE", "Claim", "claim", "finish", "heartbeat", "measured_card", "release"]

MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Claim:
    """A job this worker now holds."""

    job_id: int
    version_id: int
    attempt: int
    bundle_sha256: str


QUEUE = Queue(
    model=Job,
    claimable=lambda now: or_(Job.state == QUEUED, and_(Job.state == RUNNING, Job.lease_until < now)),
    held=lambda worker: and_(Job.worker == worker, Job.state == RUNNING),
    worker=Job.worker,
    attempts=Job.attempts,
    lease_until=Job.lease_until,
    on_claim=lambda now: {"state": RUNNING, "started_at": now},
)
"""The review jobs as a lease queue (:mod:`hub.server.core.leases`)."""


def claim(sessions: sessionmaker[Session], worker: str, lease_s: float) -> Claim | None:
    """Take the next job, or None when there is none."""
    while True:
        with sessions() as session, session.begin():
            job = claim_next(session, QUEUE, worker, lease_s)
            if job is None:
                return None
            version = session.get(Version, job.version_id)
            assert version is not None
            if job.attempts > MAX_ATTEMPTS:
                _finish(
                    session,
                    job,
                    version,
                    passed=False,
                    report={
                        "problems": [
                            f"the review stopped unfinished {MAX_ATTEMPTS} times (worker crash or timeout)"
                        ]
                    },
                )
                continue
            version.state = RUNNING
            bundle = next(f.sha256 for f in version.files if f.kind == "bundle")
            return Claim(job.id, job.version_id, job.attempts, bundle)


def measured_card(report: dict[str, Any]) -> str:
    """The verifier card of a review report as stored on the version: the card the review's
    check measured (``report["check"]["verifier_card"]``, its confusion examples left out) as
    JSON, or "" when the check measured none."""
    check = report.get("check")
    card = check.get("verifier_card") if isinstance(check, dict) else None
    if not isinstance(card, dict):
        return ""
    return json.dumps({k: v for k, v in card.items() if k != "examples"}, sort_keys=True)


def heartbeat(sessions: sessionmaker[Session], claim: Claim, worker: str, lease_s: float) -> bool:
    """Extend the lease; False when the job is no longer this worker's."""
    with sessions() as session, session.begin():
        return extend(session, QUEUE, claim.job_id, worker, lease_s)


def _finish(
    session: Session, job: Job, version: Version, *, passed: bool, report: dict[str, Any], error: bool = False
) -> None:
    now = utcnow()
    job.state = PASSED if passed else REVIEW_ERROR if error else FAILED
    job.finished_at = now
    job.lease_until = None
    version.state = job.state
    version.report = json.dumps(report)
    version.verifier_card = measured_card(report)
    version.reviewed_at = now
    env = version.environment
    if passed and all(v.id <= version.id for v in env.versions if v.state == PASSED):
        # the newest reviewed version describes the environment (summary, tags, licence)
        env.summary, env.tags, env.license = version.summary, version.tags, version.license


def release(sessions: sessionmaker[Session], claim: Claim, worker: str) -> bool:
    """Put a held job back in the queue to be tried again (its attempts stay counted); False
    when the lease was lost to another worker."""
    with sessions() as session, session.begin():
        job = session.get(Job, claim.job_id)
        if job is None or job.worker != worker or job.state != RUNNING:
            return False
        job.state, job.lease_until = QUEUED, None
        version = session.get(Version, claim.version_id)
        if version is not None:
            version.state = QUEUED
        return True


def finish(
    sessions: sessionmaker[Session],
    claim: Claim,
    worker: str,
    *,
    passed: bool,
    report: dict[str, Any],
    error: bool = False,
) -> bool:
    """Record the outcome (``error``: the hub could not judge it); False (nothing recorded) when
    the lease was lost to another worker."""
    with sessions() as session, session.begin():
        job = session.get(Job, claim.job_id)
        if job is None or job.worker != worker or job.state != RUNNING:
            return False
        version = session.get(Version, claim.version_id)
        assert version is not None
        _finish(session, job, version, passed=passed, report=report, error=error)
        return True
