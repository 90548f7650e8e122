"""The package index: PEP 503 HTML and PEP 691 JSON under ``/simple/``.

Every file carries its sha256, ``requires-python``, upload time, PEP 658 metadata file and
``yanked``. ``/simple/`` offers reviewed versions only; ``/simple-unreviewed/`` also queued, running
or failed ones (``verihub install --allow-unreviewed``). Private environments need a token and are
404 to everyone else. Only wheels are listed, never sdists: an installer given an sdist runs its
build backend, code the review did not run as it would run there (sdists stay under ``/files/``).

So that ``pip install --index-url HUB/simple/ NAME`` needs no other index, ``/simple/verihub/``
offers the hub's own verihub wheel, and any name the hub does not host redirects to the upstream
index. A hosted name, ``verihub`` and every name under the prefix ``verihub-`` are never sent
upstream (dependency confusion). A wheel's download from ``/files/`` is counted on its version
(:func:`counts_as_download`); index pages are not.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Route

from hub.registry import normalize
from hub.server.accounts import Principal, guarded, principal, rate_limited, visible_owner_ids
from hub.server.core import EnvFile, Environment, Version, find_env, find_file, offered, visible_envs

__all__ = [
    "HUB_PREFIX",
    "OWN_PROJECT",
    "counts_as_download",
    "file_route",
    "own_wheel",
    "project_route",
    "root_route",
]

_log = logging.getLogger(__name__)

#: the distribution the hub runs, served from its own wheel
OWN_PROJECT = "verihub"
#: names under this prefix are the hub's own: never looked up upstream
HUB_PREFIX = "verihub-"

JSON_V1 = "application/vnd.pypi.simple.v1+json"
HTML_V1 = "application/vnd.pypi.simple.v1+html"
_TYPES = {
    JSON_V1: JSON_V1,
    "application/vnd.pypi.simple.latest+json": JSON_V1,
    HTML_V1: HTML_V1,
    "application/vnd.pypi.simple.latest+html": HTML_V1,
    "text/html": "text/html",
    "*/*": "text/html",
}


def negotiate(accept: str) -> str:
    """The content type to answer with (PEP 691 negotiation; HTML when nothing matches)."""
    best, best_q = "text/html", -1.0
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        if media in _TYPES and q > best_q:
            best, best_q = _TYPES[media], q
    return best


def _upload_time(v: Version) -> str:
    return v.uploaded_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _files(env: Environment, allow_unreviewed: bool) -> list[tuple[Version, EnvFile]]:
    return [
        (v, f)
        for v in offered(env, allow_unreviewed=allow_unreviewed)
        for f in sorted(v.files, key=lambda f: f.filename)
        if f.kind == "wheel"
    ]


def _json_file(v: Version, f: EnvFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "filename": f.filename,
        "url": f"/files/{f.sha256}/{f.filename}",
        "hashes": {"sha256": f.sha256},
        "requires-python": v.requires_python or None,
        "size": f.size,
        "upload-time": _upload_time(v),
        "yanked": (v.yank_reason or True) if v.yanked else False,
    }
    if f.metadata_sha256:
        # PEP 714's key only: pip 23.0 (Debian 12's) reads the older "dist-info-metadata" key of the
        # JSON form and crashes on its hash mapping; without it, such a pip downloads the wheel
        out["core-metadata"] = {"sha256": f.metadata_sha256}
    return out


def _html_file(v: Version, f: EnvFile) -> str:
    attrs = [f'href="/files/{f.sha256}/{html.escape(f.filename)}#sha256={f.sha256}"']
    if v.requires_python:
        attrs.append(f'data-requires-python="{html.escape(v.requires_python)}"')
    if f.metadata_sha256:
        attrs.append(f'data-dist-info-metadata="sha256={f.metadata_sha256}"')
        attrs.append(f'data-core-metadata="sha256={f.metadata_sha256}"')
    if v.yanked:
        attrs.append(f'data-yanked="{html.escape(v.yank_reason)}"')
    return f"<a {' '.join(attrs)}>{html.escape(f.filename)}</a><br/>"


_VARY = {"Vary": "Accept, Authorization"}


def _respond(kind: str, data: dict[str, Any], body_html: str, title: str) -> Response:
    headers = dict(_VARY)
    if kind == JSON_V1:
        return Response(json.dumps(data), media_type=JSON_V1, headers=headers)
    page = (
        '<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.1">'
        f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>\n"
        f"{body_html}\n</body></html>\n"
    )
    return Response(page, media_type=kind, headers=headers)


def _who_and_scope(request: Request) -> tuple[Principal | None, str]:
    """The requester, and which private environments it may see (part of the cache key)."""
    who = principal(request)
    if who is None:
        return None, ""
    if who.is_admin and who.allows("admin"):
        return who, "admin"
    with request.app.state.sessions() as session:
        owners = visible_owner_ids(session, who)
    return who, ",".join(str(o) for o in sorted(owners))


async def _checked(request: Request, header: str, stamp: tuple[int, int]) -> tuple[Principal | None, str]:
    """Who ``header`` is and what it may see, from the auth cache when this process checked the
    same header since the hub's last write (a rate-limited client is refused all the same)."""
    state = request.app.state
    hit = state.auth_cache.get(header, stamp)
    if hit is not None and not rate_limited(request, header):
        return hit  # type: ignore[no-any-return]
    who, scope = await run_in_threadpool(_who_and_scope, request)
    if who is not None:
        state.auth_cache.put(header, stamp, (who, scope), expires_at=who.expires_at)
    return who, scope


def cached(fn: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
    """Authenticate, then serve the page from the process's page cache (see
    :mod:`hub.server.core.cache`), keyed by what the requester may see; render it on a miss."""

    @functools.wraps(fn)
    async def inner(request: Request) -> Response:
        cache = request.app.state.page_cache
        header = request.headers.get("authorization")
        if header is None:  # anonymous requests need no thread (no credentials to check)
            who, scope = None, ""
        else:
            who, scope = await _checked(request, header, cache.stamp())
        request.state.who = who
        key = (request.url.path, request.url.query, request.headers.get("accept", ""), scope)
        hit = cache.get(key)
        if hit is not None:
            body, media, status = hit
            return Response(body, status_code=status, media_type=media, headers=_VARY)
        stamp = cache.stamp()
        resp = await run_in_threadpool(fn, request)
        if resp.status_code in (200, 404) and resp.media_type is not None:
            cache.put(key, stamp, (bytes(resp.body), resp.media_type, resp.status_code))
        return resp

    return inner


def _kind(request: Request) -> str:
    fmt = request.query_params.get("format")
    return negotiate(fmt or request.headers.get("accept", "text/html"))


def own_wheel(request: Request) -> tuple[Path, str] | None:
    """The wheel of the verihub this hub runs and its sha256 (read once per process), or None."""
    state = request.app.state
    if not hasattr(state, "own_wheel"):
        wheels = sorted(state.config.own_wheel_dir.glob(f"{OWN_PROJECT}-*.whl"))
        found = None
        if len(wheels) == 1:
            found = (wheels[0], hashlib.sha256(wheels[0].read_bytes()).hexdigest())
        state.own_wheel = found
    return state.own_wheel  # type: ignore[no-any-return]


def _own_project(request: Request) -> Response:
    """``/simple/verihub/``: the hub's own wheel; 404 when it has none (never upstream)."""
    own = own_wheel(request)
    if own is None:
        return Response("not found\n", status_code=404, media_type="text/plain")
    path, sha = own
    version = path.name.split("-")[1]
    url = f"/files/{sha}/{path.name}"
    data = {
        "meta": {"api-version": "1.1"},
        "name": OWN_PROJECT,
        "versions": [version],
        "files": [
            {"filename": path.name, "url": url, "hashes": {"sha256": sha}, "size": path.stat().st_size}
        ],
    }
    body = f'<a href="{url}#sha256={sha}">{html.escape(path.name)}</a><br/>'
    return _respond(_kind(request), data, body, f"Links for {OWN_PROJECT}")


def _hosted(request: Request, project: str) -> bool:
    """Whether any environment, visible to the requester or not, is published under ``project``."""
    with request.app.state.sessions() as session:
        return (
            session.scalar(select(Environment.id).where(Environment.project == project).limit(1)) is not None
        )


def _elsewhere(request: Request, project: str) -> Response:
    """A name with nothing to offer here: the upstream index's page for it, unless the hub hosts the
    name (to anyone) or it is the hub's own (``verihub``, ``verihub-*``), which stay 404 here."""
    upstream = request.app.state.config.upstream
    if upstream and not project.startswith(HUB_PREFIX) and not _hosted(request, project):
        return RedirectResponse(f"{upstream}{project}/", status_code=302)
    return Response("not found\n", status_code=404, media_type="text/plain")


@cached
def root_route(request: Request) -> Response:
    who = request.state.who
    allow = request.scope["path"].startswith("/simple-unreviewed")
    with request.app.state.sessions() as session:
        names = [e.distribution for e in visible_envs(session, who) if offered(e, allow_unreviewed=allow)]
    if own_wheel(request) is not None:
        names.append(OWN_PROJECT)
    data = {"meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in names]}
    links = "\n".join(f'<a href="{normalize(n)}/">{html.escape(n)}</a><br/>' for n in names)
    return _respond(_kind(request), data, links, "Simple index")


@cached
def project_route(request: Request) -> Response:
    who = request.state.who
    name = request.path_params["project"]
    prefix = "/simple-unreviewed" if request.scope["path"].startswith("/simple-unreviewed") else "/simple"
    if normalize(name) != name:
        return RedirectResponse(f"{prefix}/{normalize(name)}/", status_code=301)
    if name == OWN_PROJECT:
        return _own_project(request)
    with request.app.state.sessions() as session:
        env = find_env(session, who, project=name)
        files = _files(env, prefix != "/simple") if env is not None else []
    if env is None:
        return _elsewhere(request, name)
    if not files:
        return Response("not found\n", status_code=404, media_type="text/plain")
    versions = sorted({v.version for v, _ in files}, key=lambda s: [v.version for v, _ in files].index(s))
    data = {
        "meta": {"api-version": "1.1"},
        "name": env.project,
        "versions": versions,
        "files": [_json_file(v, f) for v, f in files],
    }
    body = "\n".join(_html_file(v, f) for v, f in files)
    return _respond(_kind(request), data, body, f"Links for {env.project}")


def counts_as_download(method: str, range_header: str | None) -> bool:
    """Whether a file request is one install: a GET (not HEAD) of the whole file, or of a range
    open from its first byte (``bytes=0-``). A resumed download (``bytes=N-``) and a partial read
    (``bytes=0-1023``, a lazy wheel fetch) were counted when the download started, or are none."""
    if method != "GET":
        return False
    if range_header is None or not range_header.strip():
        return True
    unit, _, spec = range_header.partition("=")
    return unit.strip().lower() == "bytes" and spec.replace(" ", "") == "0-"


def _count(session: Session, version_id: int) -> None:
    """One more download of the version: a single UPDATE (no read, so no lost increment between
    concurrent requests); a database too busy to count does not fail the download."""
    try:
        session.execute(
            update(Version).where(Version.id == version_id).values(downloads=Version.downloads + 1)
        )
        session.commit()
    except SQLAlchemyError as exc:
        session.rollback()
        _log.warning("download of version %s not counted: %s", version_id, exc)


@guarded
def file_route(request: Request) -> Response:
    """A file or its PEP 658 metadata. Installs are counted here: a wheel's download
    (:func:`counts_as_download`) adds one to its version's counter; nothing about the requester
    is stored. Metadata files, sdists and bundles (read, not installed) and the hub's own wheel
    are not counted."""
    who = request.state.who
    sha, filename = request.path_params["sha256"], request.path_params["filename"]
    want_meta = filename.endswith(".metadata")
    if want_meta:
        filename = filename[: -len(".metadata")]
    own = own_wheel(request)
    if own is not None and not want_meta and (sha, filename) == (own[1], own[0].name):
        return FileResponse(own[0], media_type="application/octet-stream", filename=filename)
    with request.app.state.sessions() as session:
        row = find_file(session, who, sha, filename)
        if row is None or (want_meta and not row.metadata_sha256):
            return Response("not found\n", status_code=404, media_type="text/plain")
        blob = row.metadata_sha256 if want_meta else row.sha256
        if row.kind == "wheel" and not want_meta:
            if counts_as_download(request.method, request.headers.get("range")):
                _count(session, row.version_id)
    path = request.app.state.storage.path(blob)
    if want_meta:
        return FileResponse(path, media_type="application/octet-stream")
    return FileResponse(path, media_type="application/octet-stream", filename=filename)


def routes() -> list[Route]:
    """An index's routes, relative to its mount (``/simple`` or ``/simple-unreviewed``)."""
    return [Route("/", root_route), Route("/{project}/", project_route)]


def file_routes() -> list[Route]:
    """The file downloads, relative to ``/files``."""
    return [Route("/{sha256:str}/{filename:str}", file_route)]
