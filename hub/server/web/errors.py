"""The one place where the service layer's refusals become HTTP answers.

:func:`exception_handlers` is given to the Starlette application: every
:class:`~hub.server.core.problems.HubProblem` raised by an endpoint (or by what it calls) is
answered with the status of its kind, a JSON body ``{"error": message}``, and the headers a client
needs to act on it (``WWW-Authenticate`` so pip sends credentials, ``Retry-After`` on 429).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from hub.server.core.problems import HubProblem, Problem

__all__ = ["STATUS", "error", "exception_handlers", "problem_response"]

#: The HTTP status of each kind of refusal.
STATUS: Mapping[Problem, int] = {
    Problem.INVALID: 400,
    Problem.UNAUTHENTICATED: 401,
    Problem.FORBIDDEN: 403,
    Problem.NOT_FOUND: 404,
    Problem.CONFLICT: 409,
    Problem.TOO_LARGE: 413,
    Problem.UNPROCESSABLE: 422,
    Problem.RATE_LIMITED: 429,
}

_HEADERS: Mapping[Problem, Mapping[str, str]] = {
    Problem.UNAUTHENTICATED: {"WWW-Authenticate": 'Basic realm="verihub"'},
    Problem.RATE_LIMITED: {"Retry-After": "60"},
}


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """A JSON error answer (for refusals decided by the HTTP layer itself, e.g. a bad query)."""
    return Response(
        json.dumps({"error": message}) + "\n",
        status_code=status,
        media_type="application/json",
        headers=dict(headers or {}),
    )


def problem_response(exc: HubProblem) -> Response:
    """The HTTP answer to ``exc``."""
    return error(STATUS[exc.problem], str(exc), _HEADERS.get(exc.problem))


async def _handle(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HubProblem)
    return problem_response(exc)


def exception_handlers() -> dict[Any, Any]:
    """The handlers to pass to ``Starlette(exception_handlers=...)``."""
    return {HubProblem: _handle}
