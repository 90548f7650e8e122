"""Sign-up invitations: single-use codes with an expiry, made by an admin (``verihub hub invite
create`` or the ``/admin/invitations`` page). A code is shown once; only its sha256 is stored
(the code is 32 random bytes, so a plain hash cannot be reversed by guessing)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from hub.server.core import HubProblem, Invitation, Owner, Problem, utcnow

__all__ = ["DEFAULT_DAYS", "create_invitation", "list_invitations", "redeem_invitation"]

DEFAULT_DAYS = 7.0
_PREFIX = "vhi_"


def _hash(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8", "surrogatepass")).hexdigest()


def create_invitation(
    session: Session, *, by: Owner | None = None, reviewer: bool = False, expires_days: float = DEFAULT_DAYS
) -> str:
    """A new invitation; returns its code (shown once, never stored)."""
    if not 0 < expires_days <= 365:
        raise HubProblem("an invitation expires after more than 0 and at most 365 days")
    code = _PREFIX + secrets.token_urlsafe(32)
    session.add(
        Invitation(
            code_hash=_hash(code),
            reviewer=reviewer,
            created_by_id=by.id if by is not None else None,
            expires_at=utcnow() + dt.timedelta(days=expires_days),
        )
    )
    session.flush()
    return code


def redeem_invitation(session: Session, code: str, user: Owner) -> Invitation:
    """Use ``code`` for ``user`` (in the caller's transaction); refused when unknown, used or
    expired. The row is locked for update, so two sign-ups cannot share one code."""
    row = session.scalars(
        select(Invitation).where(Invitation.code_hash == _hash(code)).with_for_update()
    ).first()
    if row is None or row.used_at is not None or row.expires_at <= utcnow():
        raise HubProblem("the invitation code is not valid (wrong, used or expired)", Problem.FORBIDDEN)
    row.used_at, row.used_by_id = utcnow(), user.id
    session.flush()
    return row


def list_invitations(session: Session) -> list[Invitation]:
    """Every invitation, newest first (what the admin page lists: never a code)."""
    return list(session.scalars(select(Invitation).order_by(Invitation.id.desc())).all())
