"""The ``guarded`` decorators: resolve ``request.state.who`` before the endpoint runs.

Bad credentials and rate limits raise :class:`~hub.server.accounts.httpauth.AuthFailed` and
:class:`~hub.server.accounts.httpauth.RateLimited`, answered by :mod:`hub.server.web.errors`.
Endpoints stay plain functions (Starlette runs them in a thread).

Reads without an ``Authorization`` header are the browser's signed-in session, if any (its
cookie: :mod:`hub.server.accounts.browser`); writes never take a cookie, so a cross-site form
cannot reach them (page forms go through :mod:`hub.server.accounts.forms` and its CSRF check).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from hub.server.accounts.browser import signed_in
from hub.server.accounts.httpauth import principal

__all__ = ["guarded", "guarded_write"]


def _wrap(fn: Callable[[Request], Response], *, write: bool) -> Callable[[Request], Response]:
    @functools.wraps(fn)
    def inner(request: Request) -> Response:
        who = principal(request, write=write)  # refusals: hub.server.web.errors
        if who is None and not write:
            live = signed_in(request)
            who = live.who if live is not None else None
        request.state.who = who
        return fn(request)

    return inner


def guarded(fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Read endpoint: anonymous allowed, bad credentials refused."""
    return _wrap(fn, write=False)


def guarded_write(fn: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """Write endpoint: a bearer token is required."""
    return _wrap(fn, write=True)
