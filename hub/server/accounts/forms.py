"""Form endpoints: the one way a page changes something.

Decorate a POST route with :func:`form_endpoint` (``def route(request, form: Form) -> Response``)
and put ``{{ csrf_field }}`` inside its template's ``<form method="post">``. The decorator requires
a signed-in session (else 401, before reading the body), reads the body (urlencoded, at most
:data:`MAX_FORM_BYTES`), requires the session's CSRF token (else 403), sets
``request.state.who`` and calls the endpoint in a thread with the parsed form.
:func:`anonymous_form_endpoint` is the same for the sign-in and sign-up forms, checking the
anonymous cookie's token instead. Refusals are :class:`FormRefused`, which
:mod:`hub.server.web.errors` answers with a page. An example: docs/hub-server.md, "Writing a form".
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from hub.server.accounts.browser import CSRF_FIELD, expected_csrf, signed_in
from hub.server.core import HubProblem, Problem

__all__ = ["MAX_FORM_BYTES", "Form", "FormRefused", "anonymous_form_endpoint", "form_endpoint"]

#: the largest form body read
MAX_FORM_BYTES = 256 * 1024

#: a parsed form: field name to its (first) value
Form = Mapping[str, str]
FormHandler = Callable[[Request, Form], Response]


class FormRefused(HubProblem):
    """A form post refused before its endpoint ran: not signed in, or a bad CSRF token."""


async def _read(request: Request) -> dict[str, str]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormRefused("this address takes a form (application/x-www-form-urlencoded)", Problem.INVALID)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise FormRefused("the form is too large", Problem.TOO_LARGE)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormRefused("the form is too large", Problem.TOO_LARGE)
    form: dict[str, str] = {}
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=200)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormRefused("the form could not be read", Problem.INVALID) from exc
    for key, value in pairs:
        form.setdefault(key, value)
    return form


def _check_csrf(request: Request, form: Form) -> None:
    expected = expected_csrf(request)
    sent = form.get(CSRF_FIELD, "")
    if expected is None or not sent or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise FormRefused(
            "the form's security token is missing or out of date: go back, reload the page and send it again",
            Problem.FORBIDDEN,
        )


def _make(fn: FormHandler, *, need_session: bool) -> Callable[[Request], Awaitable[Response]]:
    def checked(request: Request, form: Form) -> Response:
        _check_csrf(request, form)
        live = signed_in(request)
        request.state.who = live.who if live is not None else None
        return fn(request, form)

    @functools.wraps(fn)
    async def endpoint(request: Request) -> Response:
        if need_session and await run_in_threadpool(signed_in, request) is None:
            raise FormRefused("sign in first", Problem.UNAUTHENTICATED)  # before reading the body
        form = await _read(request)
        return await run_in_threadpool(checked, request, form)

    return endpoint


def form_endpoint(fn: FormHandler) -> Callable[[Request], Awaitable[Response]]:
    """A POST endpoint for a signed-in user's form (see the module docstring)."""
    return _make(fn, need_session=True)


def anonymous_form_endpoint(fn: FormHandler) -> Callable[[Request], Awaitable[Response]]:
    """A POST endpoint for a form sent before sign-in (``request.state.who`` may be None)."""
    return _make(fn, need_session=False)
