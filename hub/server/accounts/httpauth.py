"""Who is asking: tokens from ``Authorization`` headers, and the failure rate limit.

Reads accept HTTP basic auth (what pip sends: any user name, the token as password, or the
token as user name) and bearer tokens. Writes accept only ``Authorization: Bearer``: a browser
never adds that header by itself, so a cross-site form cannot write (no cookies are used).
"""

from __future__ import annotations

import base64
import binascii

from starlette.requests import Request

from hub.server.accounts.users import Principal, authenticate
from hub.server.core.problems import HubProblem, Problem

__all__ = ["AuthFailed", "RateLimited", "principal"]


class AuthFailed(HubProblem):
    """Credentials are missing where needed, or were sent and are not valid."""

    def __init__(self, message: str) -> None:
        super().__init__(message, Problem.UNAUTHENTICATED)


class RateLimited(HubProblem):
    """Too many failed authentications from this client."""

    def __init__(self, message: str) -> None:
        super().__init__(message, Problem.RATE_LIMITED)


def _token(header: str, *, bearer_only: bool) -> str | None:
    kind, _, value = header.strip().partition(" ")
    if kind.lower() == "bearer":
        return value.strip()
    if kind.lower() == "basic" and not bearer_only:
        try:
            user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return ""
        return password or user
    return ""  # a scheme we do not take: a failure, not anonymous


def principal(request: Request, *, write: bool = False) -> Principal | None:
    """The authenticated principal, None when anonymous; raises AuthFailed/RateLimited."""
    header = request.headers.get("authorization")
    if header is None:
        if write:
            raise AuthFailed("this needs a token: Authorization: Bearer <token> (`verihub login`)")
        return None
    limiter = request.app.state.limiter
    client = request.client.host if request.client else "?"
    if limiter.blocked(client):
        raise RateLimited("too many failed logins from this address; wait a minute")
    text = _token(header, bearer_only=write)
    who = None
    if text:
        with request.app.state.sessions() as session:
            who = authenticate(session, text)
    if who is None:
        limiter.fail(client)
        if write and header.strip().lower().startswith("basic"):
            raise AuthFailed("writes need Authorization: Bearer <token>; basic auth is for reading only")
        raise AuthFailed("the token is not valid (wrong, expired or revoked); `verihub login` again")
    return who
