"""Users, organisations and tokens: the administration commands and request authentication."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import threading
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from hub.env import UsageError
from hub.registry import OWNER_RE, RESERVED_NAMES
from hub.server.accounts.tokens import SCOPES, new_token, parse_token, scope_allows, verify_secret
from hub.server.core import Member, Owner, Token, utcnow

__all__ = [
    "Principal",
    "add_org",
    "add_user",
    "authenticate",
    "can_publish_as",
    "create_token",
    "get_owner",
    "is_reviewer",
    "revoke_token",
    "set_reviewer",
    "visible_owner_ids",
]


@dataclass(frozen=True)
class Principal:
    """Who a request is: a user and the scope of the token it showed."""

    user_id: int
    name: str
    scope: str
    is_admin: bool
    expires_at: dt.datetime | None = None  #: the token's expiry (naive UTC), None when it has none

    def allows(self, need: str) -> bool:
        return scope_allows(self.scope, need)


def get_owner(session: Session, name: str) -> Owner | None:
    return session.scalars(select(Owner).where(Owner.name == name)).first()


def _new_owner(
    session: Session, name: str, kind: str, *, admin: bool = False, reviewer: bool = False
) -> Owner:
    if not OWNER_RE.match(name):
        raise UsageError(f"{name!r}: owner names are lowercase letters, digits and '-' (at most 39)")
    if name in RESERVED_NAMES:
        raise UsageError(f"{name!r} is a path of the hub's own pages; choose another name")
    if get_owner(session, name) is not None:
        raise UsageError(f"{name!r} already exists")
    owner = Owner(name=name, kind=kind, is_admin=admin, is_reviewer=reviewer)
    session.add(owner)
    session.flush()
    return owner


def add_user(session: Session, name: str, *, admin: bool = False, reviewer: bool = False) -> Owner:
    return _new_owner(session, name, "user", admin=admin, reviewer=reviewer)


def set_reviewer(session: Session, name: str, reviewer: bool) -> Owner:
    """Give user ``name`` the reviewer role (review bounties) or take it away."""
    user = get_owner(session, name)
    if user is None or user.kind != "user":
        raise UsageError(f"no user {name!r}; create it with `verihub hub user add {name}`")
    user.is_reviewer = reviewer
    session.flush()
    return user


def is_reviewer(session: Session, who: Principal) -> bool:
    """Whether ``who`` acts as a reviewer: a review (or admin) token of a reviewer or admin user."""
    if not who.allows("review"):
        return False
    user = session.get(Owner, who.user_id)
    return user is not None and (user.is_reviewer or user.is_admin)


def add_org(session: Session, name: str, members: list[str]) -> Owner:
    """Create organisation ``name`` (or add members to it when it exists)."""
    org = get_owner(session, name)
    if org is None:
        org = _new_owner(session, name, "org")
    elif org.kind != "org":
        raise UsageError(f"{name!r} is a user, not an organisation")
    for m in members:
        user = get_owner(session, m)
        if user is None or user.kind != "user":
            raise UsageError(f"no user {m!r}; create it with `verihub hub user add {m}`")
        if session.get(Member, (org.id, user.id)) is None:
            session.add(Member(org_id=org.id, user_id=user.id))
    session.flush()
    return org


def create_token(session: Session, user_name: str, scope: str, *, expires_days: float | None = None) -> str:
    """A new token for ``user_name``; returns the token text (shown once, never stored)."""
    user = get_owner(session, user_name)
    if user is None or user.kind != "user":
        raise UsageError(f"no user {user_name!r}; create it with `verihub hub user add {user_name}`")
    if scope not in SCOPES:
        raise UsageError(f"--scope must be one of {', '.join(SCOPES)}")
    if scope == "admin" and not user.is_admin:
        raise UsageError(f"{user_name} is not an admin; an admin token needs `verihub hub user add --admin`")
    tok = new_token()
    expires = utcnow() + dt.timedelta(days=expires_days) if expires_days is not None else None
    session.add(
        Token(id=tok.id, user_id=user.id, scope=scope, salt=tok.salt, hash=tok.hash, expires_at=expires)
    )
    session.flush()
    return tok.text


def revoke_token(session: Session, token_or_id: str) -> str:
    """Revoke a token given whole or by its id (the 12 hex digits after ``vh_``)."""
    parsed = parse_token(token_or_id)
    token_id = parsed[0] if parsed else token_or_id.strip()
    row = session.get(Token, token_id)
    if row is None:
        raise UsageError(f"no token with id {token_id!r}")
    row.revoked_at = row.revoked_at or utcnow()
    session.flush()
    return token_id


_verified: dict[str, str] = {}
_verified_lock = threading.Lock()


def authenticate(session: Session, text: str) -> Principal | None:
    """The principal for a token, or None if it is malformed, wrong, expired or revoked."""
    parsed = parse_token(text)
    if parsed is None:
        return None
    token_id, secret = parsed
    row = session.get(Token, token_id)
    if row is None or row.revoked_at is not None:
        return None
    if row.expires_at is not None and row.expires_at <= utcnow():
        return None
    fingerprint = hashlib.sha256(text.strip().encode()).hexdigest()
    with _verified_lock:
        known = _verified.get(token_id)
    if known is None or not hmac.compare_digest(known, fingerprint):
        if not verify_secret(secret, row.salt, row.hash):
            return None
        with _verified_lock:
            _verified[token_id] = fingerprint
    user = row.user
    return Principal(
        user_id=user.id, name=user.name, scope=row.scope, is_admin=user.is_admin, expires_at=row.expires_at
    )


def visible_owner_ids(session: Session, who: Principal | None) -> set[int]:
    """Owners whose private environments ``who`` may see: itself and its organisations."""
    if who is None:
        return set()
    orgs = session.scalars(select(Member.org_id).where(Member.user_id == who.user_id)).all()
    return {who.user_id, *orgs}


def can_publish_as(session: Session, who: Principal, owner: Owner) -> bool:
    """A user publishes as itself, as an organisation it belongs to, or anywhere if admin."""
    if who.is_admin and who.allows("admin"):
        return True
    return owner.id in visible_owner_ids(session, who)
