"""Server-rendered web pages (Jinja2, no scripts at all): home with search and tags, an owner's
environments, and an environment with its README (sanitised Markdown), versions, review reports,
install commands and files.

Pages read; the forms that change something are POSTs through
:func:`hub.server.accounts.forms.form_endpoint`, and every template gets ``viewer`` (the signed-in
user's name, or None) and ``csrf_field`` (the hidden CSRF input, rendered only where used). Every
page is sent with a Content-Security-Policy that allows no script at all, so even a sanitiser bug
could not run one.
"""

from __future__ import annotations

import functools
import json
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

from hub.server.accounts.browser import apply_cookies, csrf_field, signed_in
from hub.server.accounts.users import Principal, can_publish_as
from hub.server.accounts.webauth import guarded
from hub.server.core.models import PASSED, Environment, Owner, Version
from hub.server.core.queries import find_env, search, visible_envs
from hub.server.web.markdown import MAX_README_BYTES
from hub.server.web.text import visible
from hub.server.web.verifier_card import card_view

__all__ = ["HEADERS", "render_page", "routes"]

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
    return _page(request, "home.html", status=404, envs=[], tags=[], q="", tag="")


@guarded
def home(request: Request) -> Response:
    q, tag = request.query_params.get("q", ""), request.query_params.get("tag", "")
    with request.app.state.sessions() as session:
        envs = search(session, request.state.who, q, tag)
        tags = sorted({t for e in visible_envs(session, request.state.who) for t in e.tags.split(",") if t})
        return _page(request, "home.html", envs=envs, tags=tags, q=q, tag=tag)


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
        return _page(request, "owner.html", owner=name, envs=envs)


@guarded
def env_page(request: Request) -> Response:
    p = request.path_params
    with request.app.state.sessions() as session:
        env = find_env(session, request.state.who, owner=p["owner"], env_id=p["env_id"])
        if env is None:
            return _not_found(request)
        versions = sorted(env.versions, key=lambda v: v.id, reverse=True)
        clean = request.app.state.redactor.value
        reports = {v.id: clean(json.loads(v.report)) if v.report else None for v in versions}
        described = next((v for v in versions if v.state == PASSED), None)
        readme = _readme(described) if described is not None else ""
        return _page(
            request,
            "env.html",
            env=env,
            ref=f"{env.owner.name}/{env.env_id}",
            tags=[t for t in env.tags.split(",") if t],
            versions=versions,
            reports=reports,
            readme=readme,
            upstream=request.app.state.config.upstream,
            can_edit=_can_edit(session, request.state.who, env),
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
