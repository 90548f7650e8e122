"""The hub evaluations' API (admins only): ``POST /api/v1/hub-evals`` queues one from a JSON body
``{"ref": "OWNER/ID@VERSION", "model": ..., "base_url": ..., "api_key_env": "VAR", "num_tasks": N,
"rollouts": K, "seed": S}`` (:func:`hub.server.results.hub_evals.queue_eval`); ``GET
/api/v1/hub-evals/{id}`` shows it and, once done, its run's id."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts import guarded_write, principal
from hub.server.core import HubEval, received_body
from hub.server.results.hub_evals import EvalRequest, eval_json, queue_eval
from hub.server.web import error

__all__ = ["routes"]


def _request(body: Any) -> EvalRequest | str:
    if not isinstance(body, dict):
        return "the body is a JSON object"
    try:
        num = body.get("num_tasks")
        return EvalRequest(
            ref=str(body["ref"]),
            model=str(body["model"]),
            base_url=str(body["base_url"]),
            api_key_env=str(body.get("api_key_env") or ""),
            num_tasks=None if num is None else int(num),
            rollouts=int(body.get("rollouts", 1)),
            seed=int(body.get("seed", 0)),
        )
    except KeyError as exc:
        return f"the body lacks {exc.args[0]!r}"
    except (TypeError, ValueError):
        return "num_tasks, rollouts and seed are integers"


#: The largest request body taken (a few short fields).
_BODY_CAP = 16 << 10


async def queue_route(request: Request) -> Response:
    """Queue a hub evaluation (201); 403 for anyone but an admin with an admin token."""
    who = await run_in_threadpool(principal, request, write=True)
    assert who is not None
    if not (who.is_admin and who.allows("admin")):
        return error(403, "only the hub's admins (with an admin token) may queue hub evaluations")
    try:
        body = json.loads(await received_body(request, _BODY_CAP) or b"null")
    except ValueError:
        return error(400, "the body is not JSON")
    req = _request(body)
    if isinstance(req, str):
        return error(400, req)
    queued = await run_in_threadpool(queue_eval, request.app.state.sessions, who, req)
    return JSONResponse(queued, status_code=201)


@guarded_write
def show_route(request: Request) -> Response:
    who = request.state.who
    if not (who.is_admin and who.allows("admin")):
        return error(403, "only the hub's admins may see hub evaluations")
    try:
        eval_id = int(request.path_params["eval_id"])
    except ValueError:
        return error(404, "no such hub evaluation")
    with request.app.state.sessions() as session:
        row = session.get(HubEval, eval_id)
        if row is None:
            return error(404, "no such hub evaluation")
        return JSONResponse(eval_json(row))


def routes() -> list[Route]:
    """The hub evaluations' routes, relative to ``/api/v1``."""
    return [
        Route("/hub-evals", queue_route, methods=["POST"]),
        Route("/hub-evals/{eval_id}", show_route, methods=["GET"]),
    ]
