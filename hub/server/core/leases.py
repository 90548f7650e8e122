"""One lease queue over any table: claiming the oldest claimable row, and extending a lease.

The review queue (:mod:`hub.server.reviews.jobs`) and the re-verification queue
(:mod:`hub.server.results.reverify`) are the same mechanism on different tables, described by a
:class:`Queue`. A worker claims the oldest row that its queue calls claimable; on PostgreSQL the
candidate is locked with ``SELECT ... FOR UPDATE SKIP LOCKED`` so concurrent workers never wait on
each other, and on every backend the claim itself is a conditional ``UPDATE`` that only one worker
can win (a loser looks again). While the work runs, the worker pushes the lease forward
(:func:`extend`); a worker that dies leaves a lease that runs out, and the row is claimable again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from hub.server.core.models import utcnow

__all__ = ["Queue", "claim_next", "extend"]


@dataclass(frozen=True)
class Queue:
    """How one table works as a lease queue (its columns, as SQLAlchemy attributes)."""

    model: Any  #: the mapped class
    claimable: Callable[[dt.datetime], Any]  #: rows a worker may take at a time (a where-clause)
    held: Callable[[str], Any]  #: rows ``worker`` holds now (a where-clause), for :func:`extend`
    worker: Any  #: the column naming the holder
    attempts: Any  #: the column counting claims
    lease_until: Any  #: the column of the lease's end
    on_claim: Callable[[dt.datetime], Mapping[str, Any]] = lambda _now: {}  #: more columns set by a claim


def claim_next(session: Session, queue: Queue, worker: str, lease_s: float) -> Any | None:
    """Take the oldest claimable row for ``worker`` in ``session``'s transaction, or None when
    there is none; the row comes back refreshed (its attempts counted)."""
    model = queue.model
    while True:
        now = utcnow()
        row = session.scalars(
            select(model)
            .where(queue.claimable(now))
            .order_by(model.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        ).first()
        if row is None:
            return None
        won: CursorResult[Any] = session.execute(  # type: ignore[assignment]
            update(model)
            .where(model.id == row.id, queue.claimable(now))
            .values(
                {
                    queue.worker: worker,
                    queue.attempts: queue.attempts + 1,
                    queue.lease_until: now + dt.timedelta(seconds=lease_s),
                    **{getattr(model, k): v for k, v in queue.on_claim(now).items()},
                }
            )
            .execution_options(synchronize_session=False)
        )
        if won.rowcount == 1:
            session.refresh(row)
            return row
        # another worker got it first: look again


def extend(session: Session, queue: Queue, row_id: int, worker: str, lease_s: float) -> bool:
    """Push the lease of ``row_id`` forward; False when ``worker`` no longer holds it."""
    model = queue.model
    res: CursorResult[Any] = session.execute(  # type: ignore[assignment]
        update(model)
        .where(model.id == row_id, queue.held(worker))
        .values({queue.lease_until: utcnow() + dt.timedelta(seconds=lease_s)})
        .execution_options(synchronize_session=False)
    )
    return bool(res.rowcount == 1)
