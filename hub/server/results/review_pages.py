"""The rollout page's forms: label a rollout, save a corrected copy.

- ``POST /runs/{id}/rollouts/{n}/label``: fields ``value`` (``correct``, ``incorrect``,
  ``reward_hack``, ``unclear``), ``note``, ``csrf_token``;
- ``POST /runs/{id}/rollouts/{n}/correct``: fields ``turn_<i>`` (the text of assistant message
  ``i``, 0-based among all messages), ``rerun_step`` (``1`` to re-run the environment's ``step``
  on the edited actions), ``note``, ``csrf_token``.

Both go through :func:`hub.server.accounts.forms.form_endpoint` (a session, else 401; the CSRF
token, else 403) and call the services the API calls (:func:`hub.server.results.labels.label_rollout`,
:func:`hub.server.results.corrections.correct_rollout`), whose checks decide: a run the user
cannot see is 404, a user who may not label 403 (both answered with a page). Other refusals (a
bad value, a changed user turn, no change) show the rollout page again with the service's message
and its status; success is a 303 back to the rollout page.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from hub.server.accounts import Form, form_endpoint
from hub.server.core import HubProblem, Problem, bump
from hub.server.results.corrections import correct_rollout
from hub.server.results.labels import label_rollout, target
from hub.server.results.labels_api import grader_of
from hub.server.results.review_view import edited_messages
from hub.server.results.run_pages import run_href, show_rollout
from hub.server.web import STATUS, refused_page

__all__ = ["routes"]


def _where(request: Request) -> tuple[str, int]:
    return request.path_params["public_id"], int(request.path_params["idx"])


def _back(request: Request, anchor: str) -> Response:
    public_id, idx = _where(request)
    return RedirectResponse(f"{run_href(public_id)}/rollouts/{idx}#{anchor}", status_code=303)


def _refused(request: Request, exc: HubProblem, posted: Form | None = None) -> Response:
    if exc.problem in (Problem.NOT_FOUND, Problem.FORBIDDEN, Problem.UNAUTHENTICATED):
        return refused_page(request, exc)
    return show_rollout(request, STATUS[exc.problem], posted, message=str(exc))


@form_endpoint
def label_post(request: Request, form: Form) -> Response:
    state, (public_id, idx) = request.app.state, _where(request)
    try:
        with state.sessions() as session, session.begin():
            label_rollout(
                session,
                state.storage,
                request.state.who,
                public_id,
                idx,
                form.get("value", ""),
                form.get("note", ""),
            )
    except HubProblem as exc:
        return _refused(request, exc)
    bump(state.config.data)  # cards count the labels
    return _back(request, "labels")


@form_endpoint
def correct_post(request: Request, form: Form) -> Response:
    state, (public_id, idx) = request.app.state, _where(request)
    who = request.state.who
    try:
        with state.sessions() as session:
            _, rollout = target(session, state.storage, who, public_id, idx, write=True)
        body = {
            "messages": edited_messages(rollout, form),
            "note": form.get("note", ""),
            "rerun_step": form.get("rerun_step", "") == "1",
        }
        correct_rollout(state.sessions, state.storage, who, public_id, idx, body, grader_of(request))
    except HubProblem as exc:
        return _refused(request, exc, form)
    return _back(request, "corrections")


def routes() -> list[Route]:
    """The rollout page's form routes."""
    rollout = "/runs/{public_id}/rollouts/{idx:int}"
    return [
        Route(rollout + "/label", label_post, methods=["POST"]),
        Route(rollout + "/correct", correct_post, methods=["POST"]),
    ]
