"""The browser's side of a session: which cookie, whether it is ``Secure``, who it is, and the
CSRF token of the page being rendered.

Cookies are ``HttpOnly``, ``SameSite=Lax``, ``Path=/`` and ``Secure`` except on plain http to a
loopback host (a hub on ``http://127.0.0.1`` for tests and local use); a secure one is named with
the ``__Host-`` prefix, so no subdomain can set it. A browser that is not signed in gets an
anonymous cookie the first time a page renders a form, and the sign-in and sign-up forms carry
the token derived from it (so no other site can sign a browser in to an account of its choosing).

Everything here reads ``request.app.state`` and is called from endpoints (threads).
"""

from __future__ import annotations

import secrets

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from hub.server.accounts.websessions import MAX_AGE, SignedIn, csrf_for, resolve_session

__all__ = [
    "CSRF_FIELD",
    "apply_cookies",
    "clear_session_cookie",
    "cookie_secure",
    "csrf_field",
    "csrf_token",
    "expected_csrf",
    "session_secret",
    "set_session_cookie",
    "signed_in",
]

#: the name of the hidden form field that carries the CSRF token
CSRF_FIELD = "csrf_token"
_SESSION = ("__Host-vh_session", "vh_session")
_ANON = ("__Host-vh_anon", "vh_anon")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_UNSET = object()


def cookie_secure(request: Request) -> bool:
    """Whether cookies are sent ``Secure``: always, but for plain http to a loopback host."""
    return not (request.url.scheme == "http" and (request.url.hostname or "") in _LOOPBACK)


def _name(request: Request, names: tuple[str, str]) -> str:
    return names[0] if cookie_secure(request) else names[1]


def session_secret(request: Request) -> str:
    """The session cookie's secret, "" when there is none."""
    return request.cookies.get(_name(request, _SESSION), "")


def signed_in(request: Request) -> SignedIn | None:
    """The signed-in session of this request (looked up once per request), or None."""
    cached = getattr(request.state, "signed_in", _UNSET)
    if cached is not _UNSET:
        return cached  # type: ignore[return-value]
    secret = session_secret(request)
    found = None
    if secret:
        with request.app.state.sessions() as session, session.begin():
            found = resolve_session(session, secret)
    request.state.signed_in = found
    return found


def csrf_token(request: Request) -> str:
    """The token this request's forms must carry: the session's, or, before sign-in, the one of
    the browser's anonymous cookie (made now when missing; :func:`apply_cookies` sends it)."""
    live = signed_in(request)
    if live is not None:
        return live.csrf
    anon = request.cookies.get(_name(request, _ANON), "") or getattr(request.state, "new_anon", "")
    if not anon:
        anon = request.state.new_anon = secrets.token_urlsafe(32)
    return csrf_for(anon)


def expected_csrf(request: Request) -> str | None:
    """The token a POST must carry, or None when this browser has no session nor anonymous cookie."""
    live = signed_in(request)
    if live is not None:
        return live.csrf
    anon = request.cookies.get(_name(request, _ANON), "")
    return csrf_for(anon) if anon else None


def csrf_field(request: Request) -> Markup:
    """The hidden input every POST form includes: ``{{ csrf_field }}`` in a template."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, csrf_token(request))


def _set(request: Request, response: Response, names: tuple[str, str], value: str, max_age: int) -> None:
    response.set_cookie(
        _name(request, names),
        value,
        max_age=max_age,
        path="/",
        secure=cookie_secure(request),
        httponly=True,
        samesite="lax",
    )


def apply_cookies(request: Request, response: Response) -> Response:
    """Send the anonymous cookie a rendered form needed (see :func:`csrf_token`)."""
    anon = getattr(request.state, "new_anon", "")
    if anon:
        _set(request, response, _ANON, anon, 24 * 3600)
    return response


def set_session_cookie(request: Request, response: Response, secret: str) -> Response:
    _set(request, response, _SESSION, secret, int(MAX_AGE.total_seconds()))
    return response


def clear_session_cookie(request: Request, response: Response) -> Response:
    response.delete_cookie(
        _name(request, _SESSION), path="/", secure=cookie_secure(request), httponly=True, samesite="lax"
    )
    return response
