"""Who is asking: tokens from ``Authorization`` headers, and the failure rate limit.

Reads accept HTTP basic auth (what pip sends: any user name, the token as password, or the
token as user name) and bearer tokens. Writes accept only ``Authorization: Bearer``: a browser
never adds that header by itself, so a cross-site form cannot write (no cookies are used).
"""

from __future__ import annotations

import base64
import binascii

from starlette.requests import Request

from hub.server.accounts.tokens import parse_token
from hub.server.accounts.users import Principal, authenticate
from hub.server.core import HubProblem, Problem

__all__ = ["AuthFailed", "RateLimited", "principal", "rate_limited"]


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


def _limit_keys(request: Request, token: str) -> list[str]:
    """What failed authentications are counted against: the client address (the socket's peer,
    or a forwarded address only from proxies the operator named: ``hub serve
    --forwarded-allow-ips``) and, for a well-formed token, its id (so guesses at one token's
    secret from many addresses are limited too)."""
    keys = ["addr:" + (request.client.host if request.client else "?")]
    parsed = parse_token(token)
    if parsed is not None:
        keys.append("token:" + parsed[0])
    return keys


def rate_limited(request: Request, header: str) -> bool:
    """Whether the failed-auth limiter blocks this request's address or its token now."""
    limiter = request.app.state.limiter
    keys = _limit_keys(request, _token(header, bearer_only=False) or "")
    return any(limiter.blocked(k) for k in keys)


def principal(request: Request, *, write: bool = False) -> Principal | None:
    """The authenticated principal, None when anonymous; raises AuthFailed/RateLimited."""
    header = request.headers.get("authorization")
    if header is None:
        if write:
            raise AuthFailed("this needs a token: Authorization: Bearer <token> (`verihub login`)")
        return None
    limiter = request.app.state.limiter
    text = _token(header, bearer_only=write)
    keys = _limit_keys(request, text or "")
    if any(limiter.blocked(k) for k in keys):
        raise RateLimited("too many failed logins from this address or for this token; wait a minute")
    who = None
    if text:
        with request.app.state.sessions() as session:
            who = authenticate(session, text)
    if who is None:
        for key in keys:
            limiter.fail(key)
        if write and header.strip().lower().startswith("basic"):
            raise AuthFailed("writes need Authorization: Bearer <token>; basic auth is for reading only")
        raise AuthFailed("the token is not valid (wrong, expired or revoked); `verihub login` again")
    return who
