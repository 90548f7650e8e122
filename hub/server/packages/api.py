"""The JSON API under ``/api/v1/``: push, environment and version details, yank, search, and the
catalogue document (schema of ``hub/registry/catalogue.json``).

Writes need ``Authorization: Bearer <token>`` with the right scope. Anything private that the
requester may not see answers 404, exactly like something that does not exist.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.server.accounts import guarded, guarded_write, principal
from hub.server.core import (
    Environment,
    Redactor,
    Version,
    find_env,
    offered,
    received_upload,
    search,
    visible_envs,
)
from hub.server.packages.owning import owned_env, owned_version, set_about, set_private, set_yanked, transfer
from hub.server.packages.publish import publish
from hub.server.web import card_json, error

__all__ = [
    "about_route",
    "catalogue_route",
    "env_route",
    "push_route",
    "resolve_route",
    "routes",
    "search_route",
    "transfer_route",
    "unyank_route",
    "version_route",
    "visibility_route",
    "yank_route",
]


def version_json(
    env: Environment, v: Version, *, full: bool = False, redactor: Redactor | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": v.version,
        "state": v.state,
        "yanked": v.yanked,
        "yank_reason": v.yank_reason,
        "uploaded_at": v.uploaded_at.isoformat() + "Z",
        "content_hash": v.content_hash,
        "manifest_sha256": v.manifest_sha256,
        "requires_python": v.requires_python,
        "verifier_card": card_json(v.verifier_card),
        "installs": v.downloads or 0,
        "files": [
            {
                "kind": f.kind,
                "filename": f.filename,
                "sha256": f.sha256,
                "size": f.size,
                "url": f"/files/{f.sha256}/{f.filename}",
            }
            for f in sorted(v.files, key=lambda f: f.kind)
        ],
    }
    if full:
        report = json.loads(v.report) if v.report else None
        out["report"] = redactor.value(report) if redactor is not None else report
    return out


def env_json(env: Environment) -> dict[str, Any]:
    return {
        "ref": f"{env.owner.name}/{env.env_id}",
        "owner": env.owner.name,
        "id": env.env_id,
        "distribution": env.distribution,
        "private": env.private,
        "flagged": env.flagged,
        "summary": env.summary,
        "tags": [t for t in env.tags.split(",") if t],
        "license": env.license,
        "versions": [version_json(env, v) for v in sorted(env.versions, key=lambda v: v.id)],
        "offered": [v.version for v in offered(env)],
        "installs": sum(v.downloads or 0 for v in env.versions),
    }


async def push_route(request: Request) -> Response:
    who = await run_in_threadpool(principal, request, write=True)
    assert who is not None
    state = request.app.state
    owner = request.query_params.get("owner") or None
    private = request.query_params.get("private", "") in ("1", "true", "yes")
    async with received_upload(request, prefix="upload-") as upload:
        res = await run_in_threadpool(
            publish,
            state.sessions,
            state.storage,
            state.config.limits,
            who,
            upload,
            owner_name=owner,
            private=private,
            upstream=state.config.upstream,
        )
    body = {
        "ref": res.ref,
        "version": res.version,
        "created": res.created,
        "message": res.message,
        "flagged": res.flagged,
    }
    return JSONResponse(body, status_code=201 if res.created else 200)


def _lookup(request: Request) -> tuple[Any, Environment | None]:
    p = request.path_params
    session = request.app.state.sessions()
    return session, find_env(session, request.state.who, owner=p["owner"], env_id=p["env_id"])


@guarded
def env_route(request: Request) -> Response:
    session, env = _lookup(request)
    with session:
        if env is None:
            return error(404, "no such environment")
        return JSONResponse(env_json(env))


@guarded
def version_route(request: Request) -> Response:
    session, env = _lookup(request)
    with session:
        found = [v for v in env.versions if v.version == request.path_params["version"]] if env else []
        if env is None or not found:
            return error(404, "no such environment version")
        shown = version_json(env, found[0], full=True, redactor=request.app.state.redactor)
        return JSONResponse({"ref": f"{env.owner.name}/{env.env_id}", **shown})


def _version_ref(version: Version) -> dict[str, Any]:
    env = version.environment
    return {"ref": f"{env.owner.name}/{env.env_id}", "version": version.version, "yanked": version.yanked}


@guarded_write
def yank_route(request: Request) -> Response:
    p = request.path_params
    with request.app.state.sessions() as session:
        found = owned_version(
            session, request.state.who, p["owner"], p["env_id"], p["version"], doing="yank versions of"
        )
        reason = request.query_params.get("reason", "")
        set_yanked(session, request.app.state.config.data, found, yanked=True, reason=reason)
        return JSONResponse(_version_ref(found))


@guarded_write
def unyank_route(request: Request) -> Response:
    p = request.path_params
    with request.app.state.sessions() as session:
        found = owned_version(
            session, request.state.who, p["owner"], p["env_id"], p["version"], doing="un-yank versions of"
        )
        set_yanked(session, request.app.state.config.data, found, yanked=False)
        return JSONResponse(_version_ref(found))


@guarded_write
def visibility_route(request: Request) -> Response:
    """``?private=1`` or ``?private=0``: an owner makes an environment private or public."""
    p = request.path_params
    value = request.query_params.get("private", "")
    if value not in ("0", "1"):
        return error(400, "say ?private=1 (private) or ?private=0 (public)")
    with request.app.state.sessions() as session:
        env = owned_env(session, request.state.who, p["owner"], p["env_id"], doing="change the visibility of")
        set_private(session, request.app.state.config.data, env, value == "1")
        return JSONResponse({"ref": f"{env.owner.name}/{env.env_id}", "private": env.private})


@guarded_write
def about_route(request: Request) -> Response:
    """``?summary=…&tags=a,b``: an owner sets the environment's summary and tags."""
    p, q = request.path_params, request.query_params
    with request.app.state.sessions() as session:
        env = owned_env(session, request.state.who, p["owner"], p["env_id"], doing="describe")
        tags = set_about(
            session, request.app.state.config.data, env, summary=q.get("summary", ""), tags=q.get("tags", "")
        )
        return JSONResponse({"ref": f"{env.owner.name}/{env.env_id}", "summary": env.summary, "tags": tags})


@guarded_write
def transfer_route(request: Request) -> Response:
    """``?to=ORG``: an owner moves the environment to an organisation they are a member of."""
    p, who = request.path_params, request.state.who
    with request.app.state.sessions() as session:
        env = owned_env(session, who, p["owner"], p["env_id"], doing="transfer")
        target = transfer(
            session, request.app.state.config.data, who, env, request.query_params.get("to", "")
        )
        return JSONResponse({"ref": f"{target.name}/{env.env_id}", "owner": target.name})


@guarded
def search_route(request: Request) -> Response:
    q, tag = request.query_params.get("q", ""), request.query_params.get("tag", "")
    with request.app.state.sessions() as session:
        return JSONResponse([env_json(e) for e in search(session, request.state.who, q, tag)])


@guarded
def catalogue_route(request: Request) -> Response:
    """Offered versions of visible environments as a catalogue (wheel sources, content hashes).

    A catalogue names environments by bare id, and an id is only unique within its owner: an id
    that more than one owner offers is left out (install it as ``OWNER/ID``; :func:`resolve_route`
    lists the owners), so a bare id never resolves to whichever owner pushed the higher version.
    Each entry's ``author`` is its owner."""
    base = str(request.base_url).rstrip("/")
    entries: list[dict[str, Any]] = []
    owners: dict[str, set[str]] = {}
    with request.app.state.sessions() as session:
        for env in search(session, request.state.who):
            for v in offered(env):
                wheel = next((f for f in v.files if f.kind == "wheel"), None)
                if v.yanked or wheel is None:
                    continue
                owners.setdefault(env.env_id, set()).add(env.owner.name)
                entries.append(
                    {
                        "id": env.env_id,
                        "version": v.version,
                        "summary": env.summary,
                        "tags": [t for t in env.tags.split(",") if t],
                        "license": env.license,
                        "author": env.owner.name,
                        "install": {"kind": "wheel", "url": f"{base}/files/{wheel.sha256}/{wheel.filename}"},
                        "content_hash": v.content_hash,
                    }
                )
    unique = [e for e in entries if len(owners[e["id"]]) == 1]
    return JSONResponse({"schema_version": 1, "environments": unique})


@guarded
def resolve_route(request: Request) -> Response:
    """Which owners publish a bare environment id, among the environments the requester may see:
    ``{"id", "ambiguous", "candidates": [{"ref": "OWNER/ID", "offered": newest reviewed version
    or null}]}``. An id is unique only within its owner; a client installs a bare id only when
    exactly one owner has it, and otherwise lists these for the user to choose."""
    env_id = request.path_params["env_id"]
    with request.app.state.sessions() as session:
        found = [e for e in visible_envs(session, request.state.who) if e.env_id == env_id]
        candidates = []
        for env in sorted(found, key=lambda e: e.owner.name):
            newest = [v.version for v in offered(env) if not v.yanked]
            candidates.append(
                {"ref": f"{env.owner.name}/{env.env_id}", "offered": newest[-1] if newest else None}
            )
    return JSONResponse({"id": env_id, "ambiguous": len(candidates) > 1, "candidates": candidates})


@guarded
def whoami_route(request: Request) -> Response:
    who = request.state.who
    if who is None:
        return error(401, "no token sent")
    return JSONResponse({"name": who.name, "scope": who.scope, "admin": who.is_admin})


__all__ += ["whoami_route"]


def routes() -> list[Route]:
    """The environment routes, relative to ``/api/v1``."""
    return [
        Route("/push", push_route, methods=["POST"]),
        Route("/whoami", whoami_route),
        Route("/search", search_route),
        Route("/catalogue.json", catalogue_route),
        Route("/resolve/{env_id}", resolve_route),
        Route("/envs/{owner}/{env_id}", env_route),
        Route("/envs/{owner}/{env_id}/visibility", visibility_route, methods=["POST"]),
        Route("/envs/{owner}/{env_id}/about", about_route, methods=["POST"]),
        Route("/envs/{owner}/{env_id}/transfer", transfer_route, methods=["POST"]),
        Route("/envs/{owner}/{env_id}/{version}", version_route),
        Route("/envs/{owner}/{env_id}/{version}/yank", yank_route, methods=["POST"]),
        Route("/envs/{owner}/{env_id}/{version}/unyank", unyank_route, methods=["POST"]),
    ]
