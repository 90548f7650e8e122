"""The one place where the service layer's refusals become HTTP answers.

:func:`exception_handlers` is given to the Starlette application: every
:class:`~hub.server.core.problems.HubProblem` raised by an endpoint (or by what it calls) is
answered with the status of its kind, a JSON body ``{"error": message}``, and the headers a client
needs to act on it (``WWW-Authenticate`` so pip sends credentials, ``Retry-After`` on 429). A
refused page form (:class:`~hub.server.accounts.forms.FormRefused`) is answered with a page
saying why, for the person who sent it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from hub.server.accounts import FormRefused
from hub.server.core import HubProblem, Problem
from hub.server.web.pages import render_page

__all__ = ["STATUS", "error", "exception_handlers", "problem_response", "refused_page"]

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


_HEADINGS: Mapping[Problem, str] = {
    Problem.UNAUTHENTICATED: "Sign in first",
    Problem.FORBIDDEN: "Refused",
    Problem.TOO_LARGE: "Too large",
}


def refused_page(request: Request, exc: HubProblem) -> Response:
    """The page answering a refused form post."""
    heading = _HEADINGS.get(exc.problem, "Not accepted")
    return render_page(request, "refused.html", STATUS[exc.problem], heading=heading, message=str(exc))


async def _handle(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HubProblem)
    if isinstance(exc, FormRefused):
        return await run_in_threadpool(refused_page, request, exc)
    return problem_response(exc)


def exception_handlers() -> dict[Any, Any]:
    """The handlers to pass to ``Starlette(exception_handlers=...)``."""
    return {HubProblem: _handle}
