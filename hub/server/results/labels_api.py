"""The labels and corrections API (bearer tokens; the pages call the same services).

- ``POST /api/v1/runs/{id}/rollouts/{n}/labels`` with ``{"value": ..., "note": ...}``: a new label
  (201); ``GET`` the same path: ``{"current": label or null, "history": [newest first]}``.
- ``POST /api/v1/runs/{id}/rollouts/{n}/corrections`` with ``{"messages": [...], "note": ...,
  "rerun_step": false}``: a corrected copy, graded, stored (201; ``rerun_step`` re-runs a deterministic
  environment on the edited actions); ``GET``: the rollout's corrections.
- ``GET /api/v1/envs/{owner}/{env_id}/{version}/labels[?format=json]``: the version's label file
  (JSON lines, or a JSON list), what ``verihub fidelity`` reads.
- ``GET /api/v1/envs/{owner}/{env_id}/{version}/training``: labelled rollouts and corrections as
  SFT records with provenance (``verihub export --sft --hub``).

Services: :mod:`hub.server.results.labels`, :mod:`.corrections`, :mod:`.training`. Runs and
environments the requester cannot see are 404; labelling without the role is 403.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts import guarded, principal
from hub.server.core import Run, Version, bump, find_env, received_body
from hub.server.results.corrections import (
    Grader,
    SandboxGrader,
    correct_rollout,
    correction_json,
    corrections_of,
)
from hub.server.results.labels import (
    LabelError,
    dumps_lines,
    label_file,
    label_json,
    label_rollout,
    rollout_labels,
    target,
)
from hub.server.results.training import training_records
from hub.server.web import error

__all__ = ["grader_of", "routes"]

_LABEL_BODY_CAP = 64 << 10


def _index(request: Request) -> int:
    return int(request.path_params["index"])


async def _json_body(request: Request, cap: int) -> dict[str, Any]:
    raw = await received_body(request, cap)
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        raise LabelError("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise LabelError("the request body must be a JSON object")
    return body


def grader_of(request: Request) -> Grader:
    """The application's correction grader (tests inject one as ``app.state.grade_correction``)."""
    grader: Grader | None = getattr(request.app.state, "grade_correction", None)
    return grader if grader is not None else SandboxGrader()


async def post_label_route(request: Request) -> Response:
    who = await run_in_threadpool(principal, request, write=True)
    assert who is not None
    body = await _json_body(request, _LABEL_BODY_CAP)
    value, note = body.get("value"), body.get("note", "")
    if not isinstance(value, str) or not isinstance(note, str):
        raise LabelError('give {"value": "correct|incorrect|reward_hack|unclear", "note": "..."}')

    def work() -> dict[str, Any]:
        state = request.app.state
        with state.sessions() as session, session.begin():
            row = label_rollout(
                session, state.storage, who, request.path_params["public_id"], _index(request), value, note
            )
            return label_json(row)

    made = await run_in_threadpool(work)
    bump(request.app.state.config.data)  # cards count the labels
    return JSONResponse(made, status_code=201)


def _readable_run(request: Request, session: Session) -> Run:
    """The run of the requested rollout, when the requester may see it (404 otherwise)."""
    run, _ = target(
        session,
        request.app.state.storage,
        request.state.who,
        request.path_params["public_id"],
        _index(request),
        write=False,
    )
    return run


@guarded
def get_labels_route(request: Request) -> Response:
    with request.app.state.sessions() as session:
        run = _readable_run(request, session)
        history = [label_json(x) for x in rollout_labels(session, run, _index(request))]
        return JSONResponse({"current": history[0] if history else None, "history": history})


async def post_correction_route(request: Request) -> Response:
    who = await run_in_threadpool(principal, request, write=True)
    assert who is not None
    state = request.app.state
    body = await _json_body(request, state.config.limits.max_upload_bytes)
    made = await run_in_threadpool(
        correct_rollout,
        state.sessions,
        state.storage,
        who,
        request.path_params["public_id"],
        _index(request),
        body,
        grader_of(request),
    )
    return JSONResponse(made, status_code=201)


@guarded
def get_corrections_route(request: Request) -> Response:
    with request.app.state.sessions() as session:
        run = _readable_run(request, session)
        return JSONResponse([correction_json(c) for c in corrections_of(session, [run], _index(request))])


def _version(session: Any, request: Request) -> Version | None:
    p = request.path_params
    env = find_env(session, request.state.who, owner=p["owner"], env_id=p["env_id"])
    if env is None:
        return None
    return next((v for v in env.versions if v.version == p["version"]), None)


@guarded
def label_file_route(request: Request) -> Response:
    state, fmt = request.app.state, request.query_params.get("format", "jsonl")
    if fmt not in ("jsonl", "json"):
        return error(400, "?format= takes jsonl or json")
    with state.sessions() as session:
        version = _version(session, request)
        if version is None:
            return error(404, "no such environment version")
        lines = label_file(session, state.storage, request.state.who, version)
    if fmt == "json":
        return JSONResponse(lines)
    return Response(dumps_lines(lines), media_type="application/jsonl")


@guarded
def training_route(request: Request) -> Response:
    state = request.app.state
    with state.sessions() as session:
        version = _version(session, request)
        if version is None:
            return error(404, "no such environment version")
        return JSONResponse(training_records(session, state.storage, request.state.who, version))


def routes() -> list[Route]:
    """The labels and corrections routes, relative to ``/api/v1``."""
    rollout = "/runs/{public_id:str}/rollouts/{index:int}"
    return [
        Route(rollout + "/labels", post_label_route, methods=["POST"]),
        Route(rollout + "/labels", get_labels_route, methods=["GET"]),
        Route(rollout + "/corrections", post_correction_route, methods=["POST"]),
        Route(rollout + "/corrections", get_corrections_route, methods=["GET"]),
        Route("/envs/{owner}/{env_id}/{version}/labels", label_file_route),
        Route("/envs/{owner}/{env_id}/{version}/training", training_route),
    ]
