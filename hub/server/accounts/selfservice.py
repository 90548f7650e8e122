"""What a person does to their own account, for the pages and the API alike: sign up, list,
create and revoke their tokens. Every check is here, so both ways in refuse the same things."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from hub.env import UsageError
from hub.server.accounts.invitations import redeem_invitation
from hub.server.accounts.passwords import hash_password
from hub.server.accounts.tokens import SCOPES
from hub.server.accounts.users import Principal, add_user, create_token
from hub.server.core import HubProblem, Owner, Problem, Token, utcnow

__all__ = ["TokenRow", "create_own_token", "list_own_tokens", "revoke_own_token", "sign_up"]

#: the longest a token made by its user lives
MAX_TOKEN_DAYS = 365.0


@dataclass(frozen=True)
class TokenRow:
    """A token as its owner sees it listed: never its secret."""

    id: str
    scope: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= utcnow():
            return "expired"
        return "active"

    def as_json(self) -> dict[str, object]:
        def iso(t: dt.datetime | None) -> str | None:
            return t.isoformat() + "Z" if t is not None else None

        return {
            "id": self.id,
            "scope": self.scope,
            "created_at": iso(self.created_at),
            "expires_at": iso(self.expires_at),
            "revoked_at": iso(self.revoked_at),
            "state": self.state,
        }


def sign_up(session: Session, name: str, password: str, *, invitation: str, open_registration: bool) -> Owner:
    """Create user ``name`` with a password: with a valid invitation, or with none on a hub with
    open registration (an invitation given there is still used, for its reviewer role)."""
    if not invitation.strip() and not open_registration:
        raise HubProblem("this hub is by invitation: ask an admin for an invitation code", Problem.FORBIDDEN)
    password_hash = hash_password(password)
    try:
        user = add_user(session, name.strip())
    except UsageError as exc:
        raise HubProblem(
            str(exc), Problem.CONFLICT if "already exists" in str(exc) else Problem.INVALID
        ) from exc
    if invitation.strip():
        used = redeem_invitation(session, invitation, user)
        user.is_reviewer = used.reviewer
    user.password_hash = password_hash
    session.flush()
    return user


def list_own_tokens(session: Session, who: Principal) -> list[TokenRow]:
    rows = session.scalars(
        select(Token).where(Token.user_id == who.user_id).order_by(Token.created_at.desc())
    )
    return [TokenRow(t.id, t.scope, t.created_at, t.expires_at, t.revoked_at) for t in rows]


def create_own_token(session: Session, who: Principal, scope: str, expires_days: float | None) -> str:
    """A new token of ``who``'s own, no stronger than what ``who`` shows; its text, shown once."""
    if scope not in SCOPES:
        raise HubProblem(f"scope must be one of {', '.join(SCOPES)}")
    if not who.allows(scope):
        raise HubProblem(f"a {who.scope} credential cannot make a {scope} token", Problem.FORBIDDEN)
    if expires_days is not None and not 0 < expires_days <= MAX_TOKEN_DAYS:
        raise HubProblem(f"a token expires after more than 0 and at most {MAX_TOKEN_DAYS:g} days")
    try:
        return create_token(session, who.name, scope, expires_days=expires_days)
    except UsageError as exc:
        raise HubProblem(str(exc), Problem.FORBIDDEN) from exc


def revoke_own_token(session: Session, who: Principal, token_id: str) -> str:
    """Revoke one of ``who``'s tokens; anyone else's (or none) is 404, never told apart."""
    row = session.get(Token, token_id.strip())
    if row is None or row.user_id != who.user_id:
        raise HubProblem("no such token", Problem.NOT_FOUND)
    row.revoked_at = row.revoked_at or utcnow()
    session.flush()
    return row.id
