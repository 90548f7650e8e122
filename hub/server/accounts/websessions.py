"""Server-side browser sessions: a random secret in a cookie, its sha256 in ``web_sessions``.

A session lasts :data:`MAX_AGE` from sign-in and ends sooner after :data:`IDLE` without a
request; ``last_seen_at`` is written at most once a minute. Signing out deletes the row; "sign
out everywhere" deletes every row of the user. The CSRF token of a session is an HMAC of its
secret (:func:`csrf_for`): nothing more to store, and it does not reveal the secret.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import delete
from sqlalchemy.orm import Session

from hub.server.accounts.users import Principal
from hub.server.core import Owner, WebSession, utcnow

__all__ = [
    "IDLE",
    "MAX_AGE",
    "SignedIn",
    "csrf_for",
    "end_all_sessions",
    "end_session",
    "principal_of",
    "resolve_session",
    "start_session",
]

MAX_AGE = dt.timedelta(days=30)
IDLE = dt.timedelta(days=7)
_TOUCH = dt.timedelta(minutes=1)


@dataclass(frozen=True)
class SignedIn:
    """A live session: who, and the CSRF token its forms carry."""

    who: Principal
    csrf: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def csrf_for(secret: str) -> str:
    """The synchroniser token of the session (or anonymous cookie) ``secret``."""
    return hmac.new(secret.encode("utf-8", "surrogatepass"), b"verihub-csrf", hashlib.sha256).hexdigest()


def principal_of(user: Owner) -> Principal:
    """A signed-in person acts as themselves: an admin with admin scope, anyone else with review
    scope (the reviewer role itself is still the user's flag: :func:`~.users.is_reviewer`)."""
    return Principal(
        user_id=user.id, name=user.name, scope="admin" if user.is_admin else "review", is_admin=user.is_admin
    )


def start_session(session: Session, user: Owner) -> str:
    """A new session for ``user``; returns the cookie's secret (stored only hashed)."""
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        WebSession(
            id=_hash(secret), user_id=user.id, created_at=now, last_seen_at=now, expires_at=now + MAX_AGE
        )
    )
    session.flush()
    return secret


def resolve_session(session: Session, secret: str) -> SignedIn | None:
    """Who the cookie ``secret`` is, or None (unknown, expired, idle too long); touches it."""
    if not secret or len(secret) > 128:
        return None
    row = session.get(WebSession, _hash(secret))
    now = utcnow()
    if row is None:
        return None
    if row.expires_at <= now or row.last_seen_at + IDLE <= now:
        session.delete(row)
        session.flush()
        return None
    if now - row.last_seen_at >= _TOUCH:
        row.last_seen_at = now
        session.flush()
    return SignedIn(principal_of(row.user), csrf_for(secret))


def end_session(session: Session, secret: str) -> None:
    """Sign this browser out."""
    session.execute(delete(WebSession).where(WebSession.id == _hash(secret)))


def end_all_sessions(session: Session, user_id: int) -> int:
    """Sign the user out everywhere; returns how many sessions ended."""
    result = session.execute(delete(WebSession).where(WebSession.user_id == user_id))
    return int(getattr(result, "rowcount", 0) or 0)
