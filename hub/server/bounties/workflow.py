"""Bounties: one explicit state machine, its permission rules, and the lazy moves of the hub.

Every move is a row of :data:`TRANSITIONS`, ``(state, action) -> (new state, rule)``; nothing
else changes ``Bounty.state``. Each move is a conditional UPDATE (``WHERE state = <the state it
was read in>``), so two racing requests cannot both move a bounty (the loser gets 409), and each
move records a :class:`~hub.server.core.models.BountyEvent` with who (None: the hub) and when.

The hub's own moves happen lazily, whenever a bounty is read or acted on: a claim whose time ran
out reverts to ``open``; a submission whose version the hub has finished reviewing becomes
``review_passed`` or ``review_failed``. Work is due by the deadline: a claim lasts ``claim_days``
but never past the deadline, and neither claims nor (re)submissions are taken after it. After a
failed review or a rejection the claimant keeps the bounty and may resubmit (until the deadline),
or a reviewer reopens it for others.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from hub.server.accounts import Principal, is_reviewer
from hub.server.bounties.inputs import (
    BountyError,
    checked_text,
    parse_deadline,
    payout_values,
    submitted_version,
)
from hub.server.core import FAILED, PASSED, Bounty, BountyEvent, Owner, Problem, utcnow
from hub.server.web import render_markdown

__all__ = [
    "ACTIONS",
    "STATES",
    "TRANSITIONS",
    "BountyError",
    "Rule",
    "Transition",
    "act",
    "create_bounty",
    "get_bounty",
    "list_bounties",
    "parse_deadline",
    "spec_html",
    "sync",
]

NEW, OPEN, CLAIMED, SUBMITTED = "", "open", "claimed", "submitted"
REVIEW_PASSED, REVIEW_FAILED, UNDER_REVIEW = "review_passed", "review_failed", "under_review"
ACCEPTED, REJECTED = "accepted", "rejected"
STATES = (OPEN, CLAIMED, SUBMITTED, REVIEW_PASSED, REVIEW_FAILED, UNDER_REVIEW, ACCEPTED, REJECTED)


class Rule(str, Enum):
    """Who may take a transition."""

    REVIEWER = "a reviewer"  # a reviewer (or admin) user with a token of scope review or higher
    PUSHER = "a user with a push token"
    CLAIMANT = "the claimant"  # with a push token
    CLAIMANT_OR_REVIEWER = "the claimant or a reviewer"
    REVIEWER_NOT_CLAIMANT = "a reviewer other than the claimant"
    HUB = "the hub itself"


@dataclass(frozen=True)
class Transition:
    to: str
    rule: Rule


TRANSITIONS: Mapping[tuple[str, str], Transition] = MappingProxyType(
    {
        (NEW, "create"): Transition(OPEN, Rule.REVIEWER),
        (OPEN, "claim"): Transition(CLAIMED, Rule.PUSHER),
        (CLAIMED, "unclaim"): Transition(OPEN, Rule.CLAIMANT_OR_REVIEWER),
        (CLAIMED, "expire"): Transition(OPEN, Rule.HUB),
        (CLAIMED, "submit"): Transition(SUBMITTED, Rule.CLAIMANT),
        (SUBMITTED, "review_passed"): Transition(REVIEW_PASSED, Rule.HUB),
        (SUBMITTED, "review_failed"): Transition(REVIEW_FAILED, Rule.HUB),
        (REVIEW_FAILED, "submit"): Transition(SUBMITTED, Rule.CLAIMANT),
        (REVIEW_FAILED, "reopen"): Transition(OPEN, Rule.REVIEWER_NOT_CLAIMANT),
        (REVIEW_PASSED, "review"): Transition(UNDER_REVIEW, Rule.REVIEWER_NOT_CLAIMANT),
        (UNDER_REVIEW, "accept"): Transition(ACCEPTED, Rule.REVIEWER_NOT_CLAIMANT),
        (UNDER_REVIEW, "reject"): Transition(REJECTED, Rule.REVIEWER_NOT_CLAIMANT),
        (REJECTED, "submit"): Transition(SUBMITTED, Rule.CLAIMANT),
        (REJECTED, "reopen"): Transition(OPEN, Rule.REVIEWER_NOT_CLAIMANT),
        (ACCEPTED, "payout"): Transition(ACCEPTED, Rule.REVIEWER_NOT_CLAIMANT),
    }
)

#: The actions people take through the API and the CLI (the others are the hub's).
ACTIONS = ("claim", "unclaim", "submit", "review", "accept", "reject", "reopen", "payout")
_NOTE_REQUIRED = {"accept", "reject"}
_UNCLAIMED: dict[str, Any] = {"claimant_id": None, "claimed_at": None, "claim_expires_at": None}


def _name(owner_id: int | None, session: Session) -> str:
    owner = session.get(Owner, owner_id) if owner_id is not None else None
    return owner.name if owner is not None else "nobody"


def _permit(session: Session, who: Principal | None, rule: Rule, bounty: Bounty | None, action: str) -> None:
    if rule is Rule.HUB:
        if who is not None:
            raise BountyError(f"only the hub itself may {action} a bounty", Problem.FORBIDDEN)
        return
    if who is None:
        raise BountyError(
            "this needs a token: Authorization: Bearer <token> (`verihub login`)", Problem.FORBIDDEN
        )
    claimant = bounty.claimant_id if bounty is not None else None
    is_claimant = claimant == who.user_id and who.allows("push")
    if rule is Rule.PUSHER:
        ok = who.allows("push")
    elif rule is Rule.CLAIMANT:
        ok = is_claimant
    elif rule is Rule.CLAIMANT_OR_REVIEWER:
        ok = is_claimant or is_reviewer(session, who)
    else:
        ok = is_reviewer(session, who) and (rule is Rule.REVIEWER or claimant != who.user_id)
    if ok:
        return
    if rule is Rule.REVIEWER_NOT_CLAIMANT and claimant == who.user_id:
        raise BountyError(f"you claimed this bounty; {rule.value} must {action} it", Problem.FORBIDDEN)
    hint = ""
    if rule in (Rule.REVIEWER, Rule.REVIEWER_NOT_CLAIMANT):
        hint = " (a reviewer or admin user, `verihub hub user role NAME --reviewer`, with a review token)"
    what = "this bounty" if bounty is not None else "a bounty"
    raise BountyError(f"only {rule.value} may {action} {what}{hint}", Problem.FORBIDDEN)


def _move(
    session: Session,
    bounty: Bounty,
    action: str,
    actor: Principal | None,
    now: dt.datetime,
    *,
    note: str = "",
    event_version: int | None = None,
    **values: Any,
) -> None:
    """Take transition ``(bounty.state, action)`` if nobody moved the bounty meanwhile."""
    t = TRANSITIONS[(bounty.state, action)]
    done = session.execute(
        update(Bounty)
        .where(Bounty.id == bounty.id, Bounty.state == bounty.state, Bounty.updated_at == bounty.updated_at)
        .values(state=t.to, updated_at=now, **values)
        .execution_options(synchronize_session=False)
    )
    if getattr(done, "rowcount", 0) != 1:
        session.refresh(bounty)
        raise BountyError(
            f"the bounty changed meanwhile (it is {bounty.state} now); look again", Problem.CONFLICT
        )
    session.add(
        BountyEvent(
            bounty_id=bounty.id,
            actor_id=actor.user_id if actor is not None else None,
            at=now,
            action=action,
            from_state=bounty.state,
            to_state=t.to,
            note=note,
            version_id=event_version,
        )
    )
    session.flush()
    session.refresh(bounty)


def sync(session: Session, bounty: Bounty, now: dt.datetime | None = None) -> None:
    """The hub's lazy moves: an expired claim reverts to open; a finished review is recorded."""
    now = now or utcnow()
    try:
        expires = bounty.claim_expires_at
        if bounty.state == CLAIMED and expires is not None and expires <= now:
            who = _name(bounty.claimant_id, session)
            _move(session, bounty, "expire", None, now, note=f"the claim of {who} expired", **_UNCLAIMED)
        version = bounty.version
        if bounty.state == SUBMITTED and version is not None and version.state in (PASSED, FAILED):
            action = "review_passed" if version.state == PASSED else "review_failed"
            note = f"the hub's review of the submitted version {version.state}"
            _move(session, bounty, action, None, now, note=note, event_version=version.id)
    except BountyError:  # another request made the same move first
        session.refresh(bounty)


def create_bounty(
    session: Session,
    who: Principal | None,
    *,
    title: str,
    spec: str,
    reward: str,
    deadline: dt.datetime,
    claim_days: float = 7.0,
    now: dt.datetime | None = None,
) -> Bounty:
    """A new open bounty (a reviewer or admin with a review token)."""
    now = now or utcnow()
    _permit(session, who, TRANSITIONS[(NEW, "create")].rule, None, "create")
    assert who is not None
    title, reward = checked_text(title, "title", 200), checked_text(reward, "reward", 200)
    spec = checked_text(spec, "specification", 100_000)
    if deadline <= now:
        raise BountyError(f"the deadline {deadline:%Y-%m-%d %H:%M} UTC has already passed", Problem.INVALID)
    if not 0 < claim_days <= 365:
        raise BountyError("claim_days must be more than 0 and at most 365", Problem.INVALID)
    bounty = Bounty(
        title=title,
        spec=spec,
        spec_html=render_markdown(spec),  # once, here: pages never render per request
        reward=reward,
        deadline=deadline,
        claim_days=claim_days,
        state=OPEN,
        creator_id=who.user_id,
        created_at=now,
        updated_at=now,
    )
    session.add(bounty)
    session.flush()
    session.add(
        BountyEvent(bounty_id=bounty.id, actor_id=who.user_id, at=now, action="create", to_state=OPEN)
    )
    session.flush()
    session.refresh(bounty)
    return bounty


def spec_html(bounty: Bounty) -> str:
    """The specification as sanitised HTML, rendered when it was saved. A bounty saved before that
    column existed has '' there: it is rendered now and kept on the row (the caller commits)."""
    if not bounty.spec_html and bounty.spec:
        bounty.spec_html = render_markdown(bounty.spec)
    return bounty.spec_html


def get_bounty(session: Session, bounty_id: int, *, now: dt.datetime | None = None) -> Bounty:
    bounty = session.get(Bounty, bounty_id)
    if bounty is None:
        raise BountyError(f"no bounty {bounty_id}", Problem.NOT_FOUND)
    sync(session, bounty, now)
    return bounty


def list_bounties(session: Session, state: str = "", *, now: dt.datetime | None = None) -> list[Bounty]:
    """Every bounty (newest first), or those in ``state``, after the hub's lazy moves."""
    if state and state not in STATES:
        raise BountyError(f"state {state!r}: one of {', '.join(STATES)}", Problem.INVALID)
    out = []
    for bounty in session.scalars(select(Bounty).order_by(Bounty.id.desc())):
        sync(session, bounty, now)
        if not state or bounty.state == state:
            out.append(bounty)
    return out


def act(
    session: Session,
    who: Principal | None,
    bounty_id: int,
    action: str,
    *,
    note: str = "",
    ref: str = "",
    amount: str = "",
    reference: str = "",
    recipient: str = "",
    now: dt.datetime | None = None,
) -> Bounty:
    """Take ``action`` on a bounty for ``who``; raises BountyError (400/403/404/409)."""
    now = now or utcnow()
    if action not in ACTIONS:
        raise BountyError(f"no bounty action {action!r}; one of {', '.join(ACTIONS)}", Problem.NOT_FOUND)
    bounty = get_bounty(session, bounty_id, now=now)
    key = (bounty.state, action)
    if key not in TRANSITIONS:
        if action == "claim" and bounty.state == CLAIMED:
            holder, until = _name(bounty.claimant_id, session), bounty.claim_expires_at
            raise BountyError(
                f"bounty {bounty.id} is claimed by {holder} until {until:%Y-%m-%d %H:%M} UTC",
                Problem.CONFLICT,
            )
        able = sorted(a for (s, a) in TRANSITIONS if s == bounty.state and a in ACTIONS)
        raise BountyError(
            f"cannot {action} a bounty that is {bounty.state} (possible now: {', '.join(able) or 'nothing'})",
            Problem.CONFLICT,
        )
    _permit(session, who, TRANSITIONS[key].rule, bounty, action)
    assert who is not None
    note = note.strip()
    if action in _NOTE_REQUIRED and not note:
        raise BountyError(f"give a note: say why you {action} this submission", Problem.INVALID)
    values: dict[str, Any] = {}
    if action in ("claim", "submit") and now >= bounty.deadline:
        raise BountyError(f"the deadline ({bounty.deadline:%Y-%m-%d %H:%M} UTC) has passed", Problem.CONFLICT)
    if action == "claim":
        expires = min(now + dt.timedelta(days=bounty.claim_days), bounty.deadline)
        values = {"claimant_id": who.user_id, "claimed_at": now, "claim_expires_at": expires}
        values |= {"version_id": None, "submitted_at": None}
    elif action == "submit":
        values = submitted_version(session, who, ref) | {"submitted_at": now, "claim_expires_at": None}
    elif action in ("unclaim", "reopen"):
        values = _UNCLAIMED | {"version_id": None, "submitted_at": None}
    elif action == "payout":
        values = payout_values(session, who, bounty, amount, reference, recipient, now)
        note = note or f"paid {values['payout_amount']} ({values['payout_reference']})"
    _move(session, bounty, action, who, now, note=note, event_version=values.get("version_id"), **values)
    sync(session, bounty, now)  # a submitted version may have been reviewed already
    return bounty
