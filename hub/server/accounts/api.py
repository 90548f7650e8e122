"""The account API (under ``/api/v1``): what the settings pages do, for a bearer token.

``GET /tokens`` lists the caller's tokens; ``POST /tokens?scope=S[&expires_days=N]`` makes one
(no stronger than the caller's own credential; the text is in the answer, once);
``POST /tokens/ID/revoke`` revokes one of the caller's (anyone else's: 404);
``POST /sessions/revoke`` signs the caller out of every browser; ``POST
/invitations?[reviewer=1&]expires_days=N`` (admins) makes a sign-up invitation.
The checks are :mod:`hub.server.accounts.selfservice`'s, the same as the pages'.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts.httpauth import AuthFailed
from hub.server.accounts.invitations import DEFAULT_DAYS, create_invitation
from hub.server.accounts.selfservice import create_own_token, list_own_tokens, revoke_own_token
from hub.server.accounts.users import Principal
from hub.server.accounts.webauth import guarded, guarded_write
from hub.server.accounts.websessions import end_all_sessions
from hub.server.core import HubProblem, Owner, Problem, bump

__all__ = ["routes"]


def _who(request: Request) -> Principal:
    who = request.state.who
    if who is None:
        raise AuthFailed("this needs a token: Authorization: Bearer <token> (`verihub login`)")
    assert isinstance(who, Principal)
    return who


def _days(request: Request, default: float | None) -> float | None:
    text = request.query_params.get("expires_days", "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError as exc:
        raise HubProblem(f"expires_days={text!r} is not a number") from exc


@guarded
def list_tokens_route(request: Request) -> Response:
    who = _who(request)
    with request.app.state.sessions() as session:
        return JSONResponse({"tokens": [t.as_json() for t in list_own_tokens(session, who)]})


@guarded_write
def create_token_route(request: Request) -> Response:
    who = _who(request)
    days = _days(request, None)
    with request.app.state.sessions() as session, session.begin():
        text = create_own_token(session, who, request.query_params.get("scope", ""), days)
        row = next(t for t in list_own_tokens(session, who) if text.startswith(f"vh_{t.id}_"))
    return JSONResponse({"token": text, **row.as_json()}, status_code=201)


@guarded_write
def revoke_token_route(request: Request) -> Response:
    who = _who(request)
    with request.app.state.sessions() as session, session.begin():
        token_id = revoke_own_token(session, who, request.path_params["token_id"])
    bump(request.app.state.config.data)
    return JSONResponse({"id": token_id, "revoked": True})


@guarded_write
def revoke_sessions_route(request: Request) -> Response:
    who = _who(request)
    with request.app.state.sessions() as session, session.begin():
        ended = end_all_sessions(session, who.user_id)
    return JSONResponse({"ended": ended})


@guarded_write
def create_invitation_route(request: Request) -> Response:
    who = _who(request)
    if not (who.is_admin and who.allows("admin")):
        raise HubProblem("only an admin token makes invitations", Problem.FORBIDDEN)
    days = _days(request, DEFAULT_DAYS)
    assert days is not None
    with request.app.state.sessions() as session, session.begin():
        code = create_invitation(
            session,
            by=session.get(Owner, who.user_id),
            reviewer=request.query_params.get("reviewer", "") == "1",
            expires_days=days,
        )
    return JSONResponse(
        {"code": code, "reviewer": request.query_params.get("reviewer", "") == "1"}, status_code=201
    )


def routes() -> list[Route]:
    """The account routes, relative to ``/api/v1``."""
    return [
        Route("/tokens", list_tokens_route, methods=["GET"]),
        Route("/tokens", create_token_route, methods=["POST"]),
        Route("/tokens/{token_id}/revoke", revoke_token_route, methods=["POST"]),
        Route("/sessions/revoke", revoke_sessions_route, methods=["POST"]),
        Route("/invitations", create_invitation_route, methods=["POST"]),
    ]
