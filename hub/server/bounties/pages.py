"""The bounty pages: ``/bounties`` (the board, filtered by state) and ``/bounties/{id}``.

Read-only GET pages like the others (no scripts, no forms that write): the data comes from
:func:`hub.server.bounties.view.bounty_json`, so a linked private version reads "a private version"
to whoever cannot see its environment. The specification is Markdown, rendered and sanitised
once when it is saved (:func:`hub.server.bounties.workflow.spec_html`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from hub.server.accounts import guarded
from hub.server.bounties.view import bounty_json
from hub.server.bounties.workflow import STATES, BountyError, get_bounty, list_bounties, spec_html
from hub.server.web import render_page

__all__ = ["LABELS", "routes"]

#: How each state reads on the pages.
LABELS = {
    "open": "open",
    "claimed": "claimed",
    "submitted": "submitted",
    "review_passed": "automatic review passed",
    "review_failed": "automatic review failed",
    "under_review": "under human review",
    "accepted": "accepted",
    "rejected": "rejected",
}


def _missing(request: Request, message: str) -> Response:
    return render_page(request, "bounties.html", status=404, bounties=[], state="", states=STATES,
                       labels=LABELS, message=message)  # fmt: skip


@guarded
def board(request: Request) -> Response:
    state = request.query_params.get("state", "")
    with request.app.state.sessions() as session:
        try:
            found = list_bounties(session, state)
        except BountyError as exc:
            return _missing(request, str(exc))
        rows = [bounty_json(session, request.state.who, b) for b in found]
        session.commit()  # the hub's lazy moves
    return render_page(
        request, "bounties.html", bounties=rows, state=state, states=STATES, labels=LABELS, message=""
    )


@guarded
def bounty_page(request: Request) -> Response:
    with request.app.state.sessions() as session:
        try:
            bounty = get_bounty(session, request.path_params["bounty_id"])
        except BountyError as exc:
            return _missing(request, str(exc))
        data = bounty_json(session, request.state.who, bounty, full=True)
        html = spec_html(bounty)
        session.commit()  # the hub's lazy moves, and an older bounty's rendering
    return render_page(request, "bounty.html", b=data, spec=html, labels=LABELS)


def routes() -> list[Route]:
    return [Route("/bounties", board), Route("/bounties/{bounty_id:int}", bounty_page)]
