"""Web passwords: argon2id hashes (argon2-cffi's defaults), checked in constant time.

Only the hash is stored (``owners.password_hash``); a user without one cannot sign in with a
browser. A hash made with older parameters is rehashed on the next successful sign-in.
"""

from __future__ import annotations

import functools
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.orm import Session

from hub.server.accounts.users import get_owner
from hub.server.accounts.websessions import end_all_sessions
from hub.server.core import HubProblem, Owner

__all__ = ["MAX_PASSWORD", "MIN_PASSWORD", "check_password", "hash_password", "set_password"]

MIN_PASSWORD = 10
MAX_PASSWORD = 1024


@functools.lru_cache(maxsize=1)
def _hasher() -> PasswordHasher:
    return PasswordHasher()


@functools.lru_cache(maxsize=1)
def _dummy() -> str:
    """Verified against when the user has no password, so the time taken does not tell."""
    return _hasher().hash(secrets.token_hex(16))


def _checked(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise HubProblem(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise HubProblem(f"a password has at most {MAX_PASSWORD} characters")
    return password


def hash_password(password: str) -> str:
    """The argon2id hash of a password of acceptable length (HubProblem otherwise)."""
    return _hasher().hash(_checked(password))


def set_password(session: Session, user_name: str, password: str) -> Owner:
    """Give user ``user_name`` a (new) password; it ends every browser session of theirs."""
    user = get_owner(session, user_name)
    if user is None or user.kind != "user":
        raise HubProblem(f"no user {user_name!r}")
    user.password_hash = hash_password(password)
    end_all_sessions(session, user.id)
    session.flush()
    return user


def check_password(session: Session, user_name: str, password: str) -> Owner | None:
    """The user when ``password`` is theirs, else None (unknown users take as long)."""
    user = get_owner(session, user_name)
    stored = user.password_hash if user is not None and user.kind == "user" else ""
    try:
        _hasher().verify(stored or _dummy(), password[:MAX_PASSWORD])
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if user is None or not stored:
        return None
    if _hasher().check_needs_rehash(stored):
        user.password_hash = _hasher().hash(password)
        session.flush()
    return user
