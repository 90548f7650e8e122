"""The results API: push a run, show one, list an environment's runs, change a run's visibility.

``POST /api/v1/results[?env=OWNER/ID][&public=1][&label=TEXT][&price_in=P&price_out=Q]`` takes a run archive
(:mod:`hub.server.results.runpack`) with a push token; ``GET /api/v1/results/{id}`` and
``GET /api/v1/envs/{owner}/{env_id}/results[?version=V]`` show what the requester may see
(:func:`hub.server.core.queries.find_run`, :func:`~hub.server.core.queries.visible_runs`: a private run,
or any run of an environment one cannot see, is 404 like one that does not exist);
``POST /api/v1/results/{id}?public=1|0&label=TEXT`` is for the pusher (or an admin) only.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts import guarded, guarded_write, principal
from hub.server.core import bump, find_env, find_run, received_upload, visible_runs
from hub.server.results.runs import ingest_run, run_json, run_label
from hub.server.web import error
from leaderboard import TokenPrices

__all__ = ["env_results_route", "push_results_route", "result_route", "routes", "set_result_route"]

_TRUE, _FALSE = ("1", "true", "yes"), ("0", "false", "no")


def _prices(price_in: str | None, price_out: str | None) -> TokenPrices | None:
    """``?price_in=&price_out=`` (USD per million prompt / completion tokens), both or neither."""
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise ValueError("give both ?price_in= and ?price_out= (USD per million tokens), or neither")
    try:
        return TokenPrices(float(price_in), float(price_out))
    except ValueError:
        raise ValueError("?price_in= and ?price_out= are USD per million tokens, not negative") from None


async def push_results_route(request: Request) -> Response:
    """Record an uploaded run under the token's user (201, or 200 when it was there already)."""
    who = await run_in_threadpool(principal, request, write=True)
    assert who is not None
    query = request.query_params
    if "owner" in query:
        return error(400, "results are recorded under the account that pushes them; drop ?owner=")
    public = query.get("public", "0").lower()
    if public not in _TRUE + _FALSE:
        return error(400, "?public= takes 1 or 0")
    try:
        prices = _prices(query.get("price_in"), query.get("price_out"))
    except ValueError as exc:
        return error(400, str(exc))
    state = request.app.state
    async with received_upload(request, prefix="results-upload-") as upload:
        res = await run_in_threadpool(
            ingest_run,
            state.sessions,
            state.storage,
            state.config.limits,
            who,
            upload,
            env_ref=query.get("env") or None,
            public=public in _TRUE,
            label=query.get("label"),
            prices=prices,
        )
    if res.created:
        bump(state.config.data)  # cached result pages do not show the new run yet
    return JSONResponse({**res.run, "created": res.created}, status_code=201 if res.created else 200)


@guarded
def result_route(request: Request) -> Response:
    with request.app.state.sessions() as session:
        run = find_run(session, request.state.who, request.path_params["public_id"])
        if run is None:
            return error(404, "no such run")
        return JSONResponse(run_json(run))


@guarded
def env_results_route(request: Request) -> Response:
    p, version = request.path_params, request.query_params.get("version")
    who = request.state.who
    with request.app.state.sessions() as session:
        env = find_env(session, who, owner=p["owner"], env_id=p["env_id"])
        if env is None:
            return error(404, "no such environment")
        chosen = None
        if version is not None:
            found = [v for v in env.versions if v.version == version]
            if not found:
                return error(404, "no such environment version")
            chosen = found[0]
        runs = visible_runs(session, who, env=env, version=chosen)
        return JSONResponse([run_json(r, full=False) for r in runs])


@guarded_write
def set_result_route(request: Request) -> Response:
    """Make a run public or private, or relabel it: its pusher (or an admin) only."""
    who, query = request.state.who, request.query_params
    with request.app.state.sessions() as session:
        run = find_run(session, who, request.path_params["public_id"])
        if run is None:
            return error(404, "no such run")
        admin = who.is_admin and who.allows("admin")
        if not admin and (run.owner_id != who.user_id or not who.allows("push")):
            return error(403, "only the user who pushed a run (with a push token) or an admin may change it")
        public = query.get("public")
        if public is None and "label" not in query:
            return error(400, "say what to change: ?public=1|0 and/or ?label=TEXT")
        if public is not None:
            if public.lower() not in _TRUE + _FALSE:
                return error(400, "?public= takes 1 or 0")
            run.private = public.lower() in _FALSE
        if "label" in query:
            run.label = run_label(query["label"])
            entry = json.loads(run.entry)
            entry["label"] = run.label or None
            run.entry = json.dumps(entry)
        session.commit()
        bump(request.app.state.config.data)  # cached result pages show the old state
        return JSONResponse(run_json(run))


def routes() -> list[Route]:
    """The results routes, relative to ``/api/v1``."""
    return [
        Route("/results", push_results_route, methods=["POST"]),
        Route("/results/{public_id:str}", result_route, methods=["GET"]),
        Route("/results/{public_id:str}", set_result_route, methods=["POST"]),
        Route("/envs/{owner}/{env_id}/results", env_results_route),
    ]
