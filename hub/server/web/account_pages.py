"""Account pages: sign in, sign up, sign out (here or everywhere), a user's settings (tokens) and
the admins' invitations. Every POST goes through :mod:`hub.server.accounts.forms` (session and
CSRF checked there); the checks of what may be done are in :mod:`hub.server.accounts.selfservice`,
shared with the API (:mod:`hub.server.accounts.api`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from hub.server.accounts import (
    DEFAULT_DAYS,
    MIN_PASSWORD,
    SCOPES,
    Form,
    anonymous_form_endpoint,
    check_password,
    clear_session_cookie,
    create_invitation,
    create_own_token,
    end_all_sessions,
    end_session,
    form_endpoint,
    list_invitations,
    list_own_tokens,
    revoke_own_token,
    session_secret,
    set_session_cookie,
    sign_up,
    signed_in,
    start_session,
)
from hub.server.core import HubProblem, Owner, Problem, bump
from hub.server.web.errors import STATUS
from hub.server.web.pages import render_page

__all__ = ["routes"]


def _next(target: str) -> str:
    """Where to go after signing in: a path on this hub only (never ``//host`` or a URL)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/settings"


def _redirect(url: str) -> Response:
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})


def _limit_keys(request: Request, name: str) -> list[str]:
    addr = request.client.host if request.client else "?"
    return ["addr:" + addr, "signin:" + name.strip().lower()[:64]]


def _signed_in_response(request: Request, user: Owner, target: str) -> Response:
    with request.app.state.sessions() as session, session.begin():
        old = session_secret(request)
        if old:
            end_session(session, old)
        secret = start_session(session, session.get(Owner, user.id))
    return set_session_cookie(request, _redirect(_next(target)), secret)


def sign_in_page(request: Request) -> Response:
    if signed_in(request) is not None:
        return _redirect(_next(request.query_params.get("next", "/settings")))
    return _sign_in_form(request, next_=request.query_params.get("next", ""))


def _sign_in_form(request: Request, status: int = 200, **context: Any) -> Response:
    context.setdefault("name", "")
    context.setdefault("message", "")
    next_ = context.pop("next_", "")
    return render_page(
        request,
        "signin.html",
        status,
        next=next_,
        open_registration=request.app.state.config.open_registration,
        **context,
    )


@anonymous_form_endpoint
def sign_in(request: Request, form: Form) -> Response:
    name, password, target = form.get("name", ""), form.get("password", ""), form.get("next", "")
    limiter = request.app.state.limiter
    keys = _limit_keys(request, name)
    if any(limiter.blocked(k) for k in keys):
        message = "too many failed sign-ins from this address or for this user; wait a minute"
        return _sign_in_form(request, 429, name=name, message=message, next_=target)
    with request.app.state.sessions() as session, session.begin():
        user = check_password(session, name.strip(), password)
        if user is not None:
            session.expunge(user)
    if user is None:
        for key in keys:
            limiter.fail(key)
        return _sign_in_form(request, 401, name=name, message="wrong user name or password", next_=target)
    return _signed_in_response(request, user, target)


def _sign_up_form(request: Request, status: int = 200, **context: Any) -> Response:
    for key in ("name", "message", "invitation"):
        context.setdefault(key, "")
    return render_page(
        request,
        "signup.html",
        status,
        min_password=MIN_PASSWORD,
        open_registration=request.app.state.config.open_registration,
        **context,
    )


def sign_up_page(request: Request) -> Response:
    return _sign_up_form(request, invitation=request.query_params.get("code", ""))


@anonymous_form_endpoint
def sign_up_post(request: Request, form: Form) -> Response:
    name, code = form.get("name", "").strip(), form.get("invitation", "").strip()
    again = {"name": name, "invitation": code}
    limiter = request.app.state.limiter
    keys = _limit_keys(request, "")[:1]
    if any(limiter.blocked(k) for k in keys):
        return _sign_up_form(
            request, 429, message="too many failed sign-ups from this address; wait a minute", **again
        )
    if form.get("password", "") != form.get("password2", ""):
        return _sign_up_form(request, 400, message="the two passwords differ", **again)
    try:
        with request.app.state.sessions() as session, session.begin():
            user = sign_up(
                session,
                name,
                form.get("password", ""),
                invitation=code,
                open_registration=request.app.state.config.open_registration,
            )
            session.expunge(user)
    except HubProblem as exc:
        if exc.problem is Problem.FORBIDDEN:
            for key in keys:
                limiter.fail(key)
        return _sign_up_form(request, STATUS[exc.problem], message=str(exc), **again)
    bump(request.app.state.config.data)
    return _signed_in_response(request, user, "/settings")


@form_endpoint
def sign_out(request: Request, form: Form) -> Response:
    with request.app.state.sessions() as session, session.begin():
        end_session(session, session_secret(request))
    return clear_session_cookie(request, _redirect("/"))


@form_endpoint
def sign_out_everywhere(request: Request, form: Form) -> Response:
    with request.app.state.sessions() as session, session.begin():
        end_all_sessions(session, request.state.who.user_id)
    return clear_session_cookie(request, _redirect("/sign-in"))


def _settings(request: Request, status: int = 200, **context: Any) -> Response:
    who = request.state.who
    with request.app.state.sessions() as session:
        tokens = list_own_tokens(session, who)
    return render_page(
        request, "settings.html", status, tokens=tokens, scopes=[s for s in SCOPES if who.allows(s)],
        is_admin=who.is_admin, **context,
    )  # fmt: skip


def settings_page(request: Request) -> Response:
    live = signed_in(request)
    if live is None:
        return _redirect("/sign-in?next=" + quote("/settings"))
    request.state.who = live.who
    return _settings(request)


def _days(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise HubProblem(f"{text!r} is not a number of days") from exc


@form_endpoint
def create_token_post(request: Request, form: Form) -> Response:
    try:
        days = _days(form.get("expires_days", ""))
        with request.app.state.sessions() as session, session.begin():
            text = create_own_token(session, request.state.who, form.get("scope", ""), days)
    except HubProblem as exc:
        return _settings(request, STATUS[exc.problem], message=str(exc))
    return _settings(request, 201, new_token=text)


@form_endpoint
def revoke_token_post(request: Request, form: Form) -> Response:
    try:
        with request.app.state.sessions() as session, session.begin():
            revoke_own_token(session, request.state.who, request.path_params["token_id"])
    except HubProblem as exc:
        return _settings(request, STATUS[exc.problem], message=str(exc))
    bump(request.app.state.config.data)  # processes' cached authentications are stale
    return _redirect("/settings")


def _invitations(request: Request, status: int = 200, **context: Any) -> Response:
    with request.app.state.sessions() as session:
        rows = list_invitations(session)
        return render_page(request, "invitations.html", status, invitations=rows, **context)


def _not_found(request: Request) -> Response:
    return render_page(request, "refused.html", 404, heading="Not found", message="no such page")


def invitations_page(request: Request) -> Response:
    live = signed_in(request)
    if live is None or not live.who.is_admin:
        return _not_found(request)
    return _invitations(request)


@form_endpoint
def create_invitation_post(request: Request, form: Form) -> Response:
    who = request.state.who
    if not who.is_admin:
        return _not_found(request)
    try:
        days = _days(form.get("expires_days", "")) or DEFAULT_DAYS
        with request.app.state.sessions() as session, session.begin():
            code = create_invitation(
                session,
                by=session.get(Owner, who.user_id),
                reviewer=form.get("reviewer") == "1",
                expires_days=days,
            )
    except HubProblem as exc:
        return _invitations(request, STATUS[exc.problem], message=str(exc))
    return _invitations(request, 201, new_code=code)


def routes() -> list[Route]:
    return [
        Route("/sign-in", sign_in_page, methods=["GET"]),
        Route("/sign-in", sign_in, methods=["POST"]),
        Route("/sign-up", sign_up_page, methods=["GET"]),
        Route("/sign-up", sign_up_post, methods=["POST"]),
        Route("/sign-out", sign_out, methods=["POST"]),
        Route("/sign-out-everywhere", sign_out_everywhere, methods=["POST"]),
        Route("/settings", settings_page, methods=["GET"]),
        Route("/settings/tokens", create_token_post, methods=["POST"]),
        Route("/settings/tokens/{token_id}/revoke", revoke_token_post, methods=["POST"]),
        Route("/admin/invitations", invitations_page, methods=["GET"]),
        Route("/admin/invitations", create_invitation_post, methods=["POST"]),
    ]
