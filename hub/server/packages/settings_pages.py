"""An environment's settings page for its owners (``/OWNER/ID/settings``): visibility, summary
and tags, yank and un-yank a version, transfer to an organisation. The forms go through
:func:`hub.server.accounts.forms.form_endpoint` (session and CSRF token), the checks are
:mod:`.owning`'s, the same as the API's. Anyone who may not change the environment gets 404 for
the page (a private environment stays unseen) and the refusal of :mod:`.owning` for a form.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from hub.server.accounts import Form, form_endpoint, guarded
from hub.server.core import HubProblem, Problem
from hub.server.packages.owning import owned_env, owned_version, set_about, set_private, set_yanked, transfer
from hub.server.web import STATUS, render_page

__all__ = ["routes"]


def _show(request: Request, status: int = 200, **context: Any) -> Response:
    p = request.path_params
    with request.app.state.sessions() as session:
        try:
            env = owned_env(session, request.state.who, p["owner"], p["env_id"], doing="change")
        except HubProblem as exc:
            if exc.problem is Problem.FORBIDDEN:  # seen but not owned: no settings to show either
                exc = HubProblem("no such page", Problem.NOT_FOUND)
            return render_page(
                request, "refused.html", STATUS[exc.problem], heading="Not found", message=str(exc)
            )
        versions = sorted(env.versions, key=lambda v: v.id, reverse=True)
        return render_page(
            request,
            "env_settings.html",
            status,
            env=env,
            ref=f"{env.owner.name}/{env.env_id}",
            versions=versions,
            tags=", ".join(t for t in env.tags.split(",") if t),
            **context,
        )


@guarded
def settings_page(request: Request) -> Response:
    return _show(request)


def _done(request: Request) -> Response:
    p = request.path_params
    return RedirectResponse(f"/{p['owner']}/{p['env_id']}/settings", status_code=303)


def _act(request: Request, form: Form) -> str | None:
    """Do the form's action; the environment's new address when it moved, else None."""
    p, data = request.path_params, request.app.state.config.data
    who, action = request.state.who, p["action"]
    with request.app.state.sessions() as session:
        if action == "visibility":
            private = form.get("private", "")
            if private not in ("0", "1"):
                raise HubProblem("choose private or public")
            env = owned_env(session, who, p["owner"], p["env_id"], doing="change the visibility of")
            set_private(session, data, env, private == "1")
        elif action == "about":
            env = owned_env(session, who, p["owner"], p["env_id"], doing="describe")
            set_about(session, data, env, summary=form.get("summary", ""), tags=form.get("tags", ""))
        elif action in ("yank", "unyank"):
            doing = "yank versions of" if action == "yank" else "un-yank versions of"
            version = owned_version(
                session, who, p["owner"], p["env_id"], form.get("version", ""), doing=doing
            )
            set_yanked(session, data, version, yanked=action == "yank", reason=form.get("reason", ""))
        elif action == "transfer":
            env = owned_env(session, who, p["owner"], p["env_id"], doing="transfer")
            target = transfer(session, data, who, env, form.get("to", ""))
            return f"/{target.name}/{env.env_id}/settings"
        else:
            raise HubProblem("no such setting", Problem.NOT_FOUND)
    return None


@form_endpoint
def settings_post(request: Request, form: Form) -> Response:
    try:
        moved = _act(request, form)
    except HubProblem as exc:
        if exc.problem is Problem.NOT_FOUND or exc.problem is Problem.FORBIDDEN:
            return render_page(
                request, "refused.html", STATUS[exc.problem], heading="Refused", message=str(exc)
            )
        return _show(request, STATUS[exc.problem], message=str(exc))
    return RedirectResponse(moved, status_code=303) if moved else _done(request)


def routes() -> list[Route]:
    return [
        Route("/{owner}/{env_id}/settings", settings_page, methods=["GET"]),
        Route("/{owner}/{env_id}/settings/{action}", settings_post, methods=["POST"]),
    ]
