"""The bounty API under ``/api/v1/bounties``: list, show, create and the actions on one bounty.

Reads are public (a linked private version is shown as ``{"private": true}`` to those who cannot
see its environment). Writes need ``Authorization: Bearer <token>``; their parameters come as a
JSON object body or as query parameters. Refusals answer ``{"error": ...}`` with the status of
its kind (:mod:`hub.server.web.errors`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts import guarded, guarded_write, principal
from hub.server.bounties.view import bounty_json
from hub.server.bounties.workflow import (
    BountyError,
    act,
    create_bounty,
    get_bounty,
    list_bounties,
    parse_deadline,
)
from hub.server.core import received_body
from hub.server.web import error

__all__ = ["routes"]

_MAX_BODY = 256 * 1024
_FIELDS = (
    "title",
    "spec",
    "reward",
    "deadline",
    "claim_days",
    "note",
    "ref",
    "amount",
    "reference",
    "recipient",
)


async def _params(request: Request) -> dict[str, str] | Response:
    """Query parameters, overridden by the fields of a JSON object body (read under the cap)."""
    params = {k: v for k, v in request.query_params.items() if k in _FIELDS}
    body = await received_body(request, _MAX_BODY)
    if body.strip():
        try:
            data = json.loads(body)
        except ValueError:
            return error(400, "the body is not JSON; send a JSON object or use query parameters")
        if not isinstance(data, dict):
            return error(400, "the body must be a JSON object")
        params |= {k: str(v) for k, v in data.items() if k in _FIELDS and v is not None}
    return params


@guarded
def list_route(request: Request) -> Response:
    state = request.query_params.get("state", "")
    with request.app.state.sessions() as session:
        found = list_bounties(session, state)
        body = [bounty_json(session, request.state.who, b) for b in found]
        session.commit()  # the hub's lazy moves (expired claims, finished reviews)
        return JSONResponse(body)


@guarded
def show_route(request: Request) -> Response:
    with request.app.state.sessions() as session:
        bounty = get_bounty(session, request.path_params["bounty_id"])
        body = bounty_json(session, request.state.who, bounty, full=True)
        session.commit()
        return JSONResponse(body)


@guarded_write
def _create(request: Request) -> Response:
    p: dict[str, str] = request.state.params
    with request.app.state.sessions() as session:
        try:
            claim_days = float(p.get("claim_days") or 7)
        except ValueError:
            return error(400, f"claim_days {p['claim_days']!r} is not a number of days")
        bounty = create_bounty(
            session,
            request.state.who,
            title=p.get("title", ""),
            spec=p.get("spec", ""),
            reward=p.get("reward", ""),
            deadline=parse_deadline(p.get("deadline", "")),
            claim_days=claim_days,
        )
        body = bounty_json(session, request.state.who, bounty, full=True)
        session.commit()
        return JSONResponse(body, status_code=201)


@guarded_write
def _act(request: Request) -> Response:
    p: dict[str, str] = request.state.params
    with request.app.state.sessions() as session:
        try:
            bounty = act(
                session,
                request.state.who,
                request.path_params["bounty_id"],
                request.path_params["action"],
                note=p.get("note", ""),
                ref=p.get("ref", ""),
                amount=p.get("amount", ""),
                reference=p.get("reference", ""),
                recipient=p.get("recipient", ""),
            )
        except BountyError:
            session.commit()  # the action changed nothing; keep the hub's lazy moves (an expired claim)
            raise
        body = bounty_json(session, request.state.who, bounty, full=True)
        session.commit()
        return JSONResponse(body)


def _with_params(handler: Any) -> Any:
    """Authenticate first (401 without reading the body), then read the body under its cap,
    then run ``handler``."""

    async def endpoint(request: Request) -> Response:
        await run_in_threadpool(principal, request, write=True)  # refusals: hub.server.web.errors
        params = await _params(request)
        if isinstance(params, Response):
            return params
        request.state.params = params
        return await run_in_threadpool(handler, request)

    return endpoint


def routes() -> list[Route]:
    """The bounty routes, relative to ``/api/v1``."""
    return [
        Route("/bounties", list_route, methods=["GET"]),
        Route("/bounties", _with_params(_create), methods=["POST"]),
        Route("/bounties/{bounty_id:int}", show_route, methods=["GET"]),
        Route("/bounties/{bounty_id:int}/{action}", _with_params(_act), methods=["POST"]),
    ]
