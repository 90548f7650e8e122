"""The ``guarded`` decorator: resolves ``request.state.who`` and turns auth errors into answers.

401 for bad credentials (with ``WWW-Authenticate: Basic`` so pip knows to send them), 429 once
a client failed too often. Endpoints stay plain functions (Starlette runs them in a thread).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from hub.server.httpauth import AuthFailed, RateLimited, principal

__all__ = ["error", "guarded", "guarded_write"]


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps({"error": message}) + "\n",
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _wrap(fn: Callable[[Request], Response], *, write: bool) -> Callable[[Request], Response]:
    @functools.wraps(fn)
    def inner(request: Request) -> Response:
        try:
            request.state.who = principal(request, write=write)
        except RateLimited as exc:
            return error(429, str(exc), {"Retry-After": "60"})
        except AuthFailed as exc:
            return error(401, str(exc), {"WWW-Authenticate": 'Basic realm="verihub"'})
        return fn(request)

    return inner


def guarded(fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Read endpoint: anonymous allowed, bad credentials refused."""
    return _wrap(fn, write=False)


def guarded_write(fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Write endpoint: a bearer token is required."""
    return _wrap(fn, write=True)
