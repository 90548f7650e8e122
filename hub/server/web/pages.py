"""Server-rendered web pages (Jinja2, no scripts at all): home with search and tags, an owner's
environments, and an environment with its README (sanitised Markdown) first, then its results
summary, author, last update and install count, install commands, and its versions with their
review reports, verifier card slots and files.

Pages read; the forms that change something are POSTs through
:func:`hub.server.accounts.forms.form_endpoint`, and every template gets ``viewer`` (the signed-in
user's name, or None) and ``csrf_field`` (the hidden CSRF input, rendered only where used). Forms
that only ask (search, table filters) use GET, and tables sort through ``?sort=``
(:mod:`hub.server.web.tables`). Every page is sent with a Content-Security-Policy that allows no
script at all, so even a sanitiser bug could not run one.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment as Jinja
from jinja2 import FileSystemLoader, select_autoescape
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from hub.server.accounts import Principal, apply_cookies, can_publish_as, csrf_field, guarded, signed_in
from hub.server.core import (
    FAILED,
    PASSED,
    QUEUED,
    REVIEW_ERROR,
    RUNNING,
    Environment,
    Owner,
    Version,
    find_env,
    search,
    visible_envs,
)
from hub.server.web.envinfo import installs, last_update, results_summary
from hub.server.web.markdown import MAX_README_BYTES
from hub.server.web.tables import Sort, choose, parse_sort, sort_rows
from hub.server.web.text import visible
from hub.server.web.verifier_card import card_view

__all__ = ["HEADERS", "EnvRow", "Table", "render_page", "routes"]

_HERE = Path(__file__).resolve().parent / "templates"
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Vary": "Authorization, Cookie",
}


class _LazyCsrfField:
    """``{{ csrf_field }}``: the hidden input, made when a template uses it (a page without a form
    sets no anonymous cookie)."""

    def __init__(self, request: Request) -> None:
        self._request = request

    def __html__(self) -> str:
        return str(csrf_field(self._request))

    def __str__(self) -> str:
        return self.__html__()


@functools.lru_cache(maxsize=1)
def _jinja() -> Jinja:
    env = Jinja(loader=FileSystemLoader(_HERE), autoescape=select_autoescape(["html"]))
    env.filters["visible"] = visible  # untrusted text: escaped, controls shown (hub.server.web.text)
    env.globals["verifier_card"] = card_view  # templates/_verifier_card.html's view
    return env


def _page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
    base = str(request.base_url).rstrip("/")
    live = signed_in(request)
    context.setdefault("viewer", live.who.name if live is not None else None)
    context.setdefault("csrf_field", _LazyCsrfField(request))
    body = _jinja().get_template(template).render(base=base, **context)
    headers = dict(_HEADERS)
    if live is not None or bool(getattr(request.state, "new_anon", "")):
        headers["Cache-Control"] = "no-store"
    return apply_cookies(request, HTMLResponse(body, status_code=status, headers=headers))


def render_page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
    """``template`` rendered with the page headers (the other page modules' way in)."""
    return _page(request, template, status, **context)


#: The headers every page is sent with (the no-script Content-Security-Policy included).
HEADERS = _HEADERS


def _not_found(request: Request) -> Response:
    return _page(request, "home.html", status=404, table=None, tags=[], q="", tag="")


#: Review states a table may be filtered by (``?state=``).
_STATES = (PASSED, QUEUED, RUNNING, FAILED, REVIEW_ERROR)
#: The environment lists' columns: key -> whether a click first sorts descending.
_ENV_KEYS = {"name": False, "installs": True, "updated": True}
_VERSION_KEYS = {"version": True, "uploaded": True, "installs": True, "review": False}


@dataclass(frozen=True)
class EnvRow:
    """An environment as the lists show it."""

    env: Environment
    ref: str
    latest: Version | None
    installs: int
    updated: dt.datetime | None


def _rows(envs: list[Environment]) -> list[EnvRow]:
    return [
        EnvRow(
            env=e,
            ref=f"{e.owner.name}/{e.env_id}",
            latest=max(e.versions, key=lambda v: v.id, default=None),
            installs=installs(e.versions),
            updated=last_update(e.versions),
        )
        for e in envs
    ]


@dataclass(frozen=True)
class Table:
    """A table's rows as asked for: its order, its ``state`` filter and the notes on bad parameters."""

    rows: list[Any]
    sort: Sort
    state: str
    notes: list[str]


def _table(
    request: Request,
    rows: list[Any],
    path: str,
    keys: dict[str, bool],
    default: str,
    columns: dict[str, Callable[[Any], Any]],
    state_of: Callable[[Any], str | None],
) -> Table:
    """``rows`` filtered by ``?state=`` (``state_of`` a row) and sorted by ``?sort=``."""
    query = request.query_params
    state, note = choose(query, "state", _STATES)
    kept = [(k, v) for k, v in query.multi_items() if k != "state" or state]  # a refused filter is dropped
    sort = parse_sort(query, kept, keys, default, path=path)
    shown = [r for r in rows if not state or state_of(r) == state]
    return Table(sort_rows(shown, sort, columns), sort, state, [*sort.errors, *([note] if note else [])])


def _env_table(request: Request, envs: list[Environment], path: str) -> Table:
    """The environments; ``?state=`` filters by the newest version's review."""
    columns: dict[str, Callable[[Any], Any]] = {
        "name": lambda r: r.ref.casefold(),
        "installs": lambda r: r.installs,
        "updated": lambda r: r.updated,
    }
    return _table(
        request, _rows(envs), path, _ENV_KEYS, "name", columns, lambda r: r.latest.state if r.latest else None
    )


@guarded
def home(request: Request) -> Response:
    q, tag = request.query_params.get("q", ""), request.query_params.get("tag", "")
    with request.app.state.sessions() as session:
        envs = search(session, request.state.who, q, tag)
        tags = sorted({t for e in visible_envs(session, request.state.who) for t in e.tags.split(",") if t})
        table = _env_table(request, envs, "/")
        return _page(request, "home.html", table=table, tags=tags, q=q, tag=tag, states=_STATES)


@guarded
def owner_page(request: Request) -> Response:
    name = request.path_params["owner"]
    with request.app.state.sessions() as session:
        owner = session.scalars(select(Owner).where(Owner.name == name)).first()
        envs = [
            e
            for e in visible_envs(session, request.state.who)
            if owner is not None and e.owner_id == owner.id
        ]
        if owner is None or not envs:
            return _not_found(request)
        table = _env_table(request, envs, f"/{name}")
        return _page(request, "owner.html", owner=name, table=table, states=_STATES)


def _versions(request: Request, versions: list[Version], path: str) -> Table:
    """The versions table (newest first unless ``?sort=`` says otherwise)."""
    columns: dict[str, Callable[[Any], Any]] = {
        "version": lambda v: v.id,
        "uploaded": lambda v: v.uploaded_at,
        "installs": lambda v: v.downloads or 0,
        "review": lambda v: v.state,
    }
    return _table(request, versions, path, _VERSION_KEYS, "-version", columns, lambda v: v.state)


@guarded
def env_page(request: Request) -> Response:
    p = request.path_params
    who = request.state.who
    with request.app.state.sessions() as session:
        env = find_env(session, who, owner=p["owner"], env_id=p["env_id"])
        if env is None:
            return _not_found(request)
        ref = f"{env.owner.name}/{env.env_id}"
        versions = sorted(env.versions, key=lambda v: v.id, reverse=True)
        clean = request.app.state.redactor.value
        reports = {v.id: clean(json.loads(v.report)) if v.report else None for v in versions}
        described = next((v for v in versions if v.state == PASSED), None)
        readme = _readme(described) if described is not None else ""
        return _page(
            request,
            "env.html",
            env=env,
            ref=ref,
            tags=[t for t in env.tags.split(",") if t],
            table=_versions(request, versions, f"/{ref}"),
            n_versions=len(versions),
            reports=reports,
            readme=readme,
            reviewed=described is not None,
            upstream=request.app.state.config.upstream,
            can_edit=_can_edit(session, request.state.who, env),
            results=results_summary(session, who, env, ref),
            installs=installs(versions),
            updated=last_update(versions),
            states=_STATES,
        )


def _can_edit(session: Session, who: Principal | None, env: Environment) -> bool:
    """Whether to link the environment's settings page (its owners only)."""
    return who is not None and who.allows("push") and can_publish_as(session, who, env.owner)


def _readme(v: Version) -> Markup:
    """The README rendered at publish; a version pushed before that shows its text escaped."""
    if v.readme_html or not v.readme:
        return Markup(v.readme_html)
    return Markup("<pre>{}</pre>").format(v.readme[:MAX_README_BYTES])


def favicon(_request: Request) -> Response:
    """No icon: an empty answer, so browsers stop asking (and log no 404 on every page)."""
    return Response(status_code=204, headers={"Cache-Control": "max-age=86400"})


def css(_request: Request) -> Response:
    return FileResponse(_HERE / "hub.css", media_type="text/css", headers={"Cache-Control": "max-age=300"})


def routes() -> list[Route]:
    return [
        Route("/", home),
        Route("/favicon.ico", favicon),
        Route("/{owner}", owner_page),
        Route("/{owner}/{env_id}", env_page),
    ]
