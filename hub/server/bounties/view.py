"""What a requester sees of a bounty: the one place the API and the pages get bounty data from.

Bounties are public; the environment version linked to one may not be. A version whose
environment the requester cannot see is shown as ``{"private": true}`` with no name, state or
link (in the bounty and in every event of its history), exactly as if it were unnamed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from hub.server.accounts import Principal
from hub.server.bounties.workflow import ACTIONS, TRANSITIONS
from hub.server.core import Bounty, Version, find_env, utcnow

__all__ = ["bounty_json", "stamp"]


def stamp(when: dt.datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``, or None."""
    return when.isoformat(timespec="seconds") + "Z" if when is not None else None


def _version(session: Session, who: Principal | None, v: Version | None, seen: dict[int, bool]) -> Any:
    if v is None:
        return None
    env = v.environment
    if v.id not in seen:
        seen[v.id] = not env.private or find_env(session, who, project=env.project) is not None
    if not seen[v.id]:
        return {"private": True, "ref": None}
    ref = f"{env.owner.name}/{env.env_id}"
    return {
        "private": False,
        "ref": f"{ref}@{v.version}",
        "url": f"/{ref}#v-{v.version}",
        "review_state": v.state,
        "yanked": v.yanked,
    }


def _possible(bounty: Bounty, now: dt.datetime) -> list[str]:
    """The actions people may take now (someone may; whether the requester may is not shown)."""
    late = {"claim", "submit"} if now >= bounty.deadline else set()
    paid = {"payout"} if bounty.payout_at is not None else set()
    able = (a for (s, a) in TRANSITIONS if s == bounty.state and a in ACTIONS)
    return sorted(a for a in able if a not in late | paid)


def bounty_json(
    session: Session,
    who: Principal | None,
    bounty: Bounty,
    *,
    full: bool = False,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The bounty as ``who`` may see it; ``full`` adds the specification and the history.

    It only reads: callers bring the bounty up to date first (:func:`~hub.server.bounties.workflow.sync`,
    which ``get_bounty``, ``list_bounties`` and ``act`` do)."""
    now = now or utcnow()
    seen: dict[int, bool] = {}
    out: dict[str, Any] = {
        "id": bounty.id,
        "url": f"/bounties/{bounty.id}",
        "title": bounty.title,
        "reward": bounty.reward,
        "state": bounty.state,
        "deadline": stamp(bounty.deadline),
        "deadline_passed": now >= bounty.deadline,
        "claim_days": bounty.claim_days,
        "created_by": bounty.creator.name,
        "created_at": stamp(bounty.created_at),
        "claimant": bounty.claimant.name if bounty.claimant is not None else None,
        "claimed_at": stamp(bounty.claimed_at),
        "claim_expires_at": stamp(bounty.claim_expires_at),
        "submission": _version(session, who, bounty.version, seen),
        "submitted_at": stamp(bounty.submitted_at),
        "actions": _possible(bounty, now),
        "decision": None,
        "payout": None,
    }
    decided = [e for e in bounty.events if e.action in ("accept", "reject")]
    if bounty.state in ("accepted", "rejected") and decided:
        last = decided[-1]
        out["decision"] = {
            "by": last.actor.name if last.actor is not None else None,
            "at": stamp(last.at),
            "note": last.note,
        }
    if bounty.payout_at is not None:
        out["payout"] = {
            "amount": bounty.payout_amount,
            "recipient": bounty.payout_recipient.name if bounty.payout_recipient else None,
            "reference": bounty.payout_reference,
            "recorded_by": bounty.payout_by.name if bounty.payout_by else None,
            "recorded_at": stamp(bounty.payout_at),
        }
    if full:
        out["spec"] = bounty.spec
        out["events"] = [
            {
                "at": stamp(e.at),
                "actor": e.actor.name if e.actor is not None else None,
                "action": e.action,
                "from": e.from_state or None,
                "to": e.to_state,
                "note": e.note,
                "version": _version(session, who, e.version, seen),
            }
            for e in bounty.events
        ]
    return out
