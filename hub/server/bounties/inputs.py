"""The inputs of bounty requests, checked and resolved, and the error every refusal raises.

A deadline in either accepted form, the bounty's texts within their limits, the version a
claimant submits (one that exists, that they may publish as, not yanked; someone else's private
version is refused exactly like a missing one), and the payout record's values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from hub.registry import parse_ref
from hub.server.accounts import Principal, can_publish_as, get_owner
from hub.server.core import Bounty, HubProblem, Problem, find_env

__all__ = ["BountyError", "checked_text", "parse_deadline", "payout_values", "submitted_version"]


class BountyError(HubProblem):
    """A bounty request was refused."""


def parse_deadline(text: str) -> dt.datetime:
    """``YYYY-MM-DD`` (the end of that day, 23:59:59 UTC) or an ISO date and time -> naive UTC."""
    text = text.strip()
    try:
        if len(text) == 10:
            return dt.datetime.fromisoformat(text) + dt.timedelta(days=1, seconds=-1)
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise BountyError(
            f"deadline {text!r}: use YYYY-MM-DD or YYYY-MM-DDTHH:MM[Z]", Problem.INVALID
        ) from exc
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return when


def checked_text(value: str, what: str, limit: int) -> str:
    """``value`` stripped; 400 when it is empty or longer than ``limit``."""
    value = value.strip()
    if not value:
        raise BountyError(f"give the bounty's {what}", Problem.INVALID)
    if len(value) > limit:
        raise BountyError(f"the {what} is {len(value)} characters; at most {limit}", Problem.INVALID)
    return value


def submitted_version(session: Session, who: Principal, ref: str) -> dict[str, Any]:
    """The bounty fields for submitting ``OWNER/ID@VERSION`` (its version id)."""
    try:
        owner, env_id, version = parse_ref(ref.strip())
    except ValueError as exc:
        raise BountyError(str(exc), Problem.INVALID) from exc
    if version is None:
        raise BountyError("name the version you submit: OWNER/ID@VERSION", Problem.INVALID)
    env = find_env(session, who, owner=owner, env_id=env_id)
    found = [v for v in env.versions if v.version == version] if env is not None else []
    if env is None or not found:
        raise BountyError(
            f"no environment version {owner}/{env_id}@{version} on this hub; push it first", Problem.INVALID
        )
    if not can_publish_as(session, who, env.owner):
        raise BountyError(
            f"you may not publish as {owner}, so {owner}/{env_id} is not yours to submit", Problem.FORBIDDEN
        )
    if found[0].yanked:
        raise BountyError(f"{owner}/{env_id}@{version} is yanked; submit another version", Problem.CONFLICT)
    return {"version_id": found[0].id}


def payout_values(
    session: Session,
    who: Principal,
    bounty: Bounty,
    amount: str,
    reference: str,
    recipient: str,
    now: dt.datetime,
) -> dict[str, Any]:
    """The payout record's fields: the reward unless another amount is given, paid to the
    claimant unless another recipient is named; recorded once."""
    if bounty.payout_at is not None:
        raise BountyError(f"the payout of bounty {bounty.id} is already recorded", Problem.CONFLICT)
    if not reference.strip():
        raise BountyError("give the payment's reference (a transfer id, an invoice number)", Problem.INVALID)
    payee = get_owner(session, recipient.strip()) if recipient.strip() else bounty.claimant
    if payee is None:
        raise BountyError(f"no user or organisation {recipient!r} to pay", Problem.INVALID)
    return {
        "payout_amount": checked_text(amount or bounty.reward, "payout amount", 200),
        "payout_reference": checked_text(reference, "payout reference", 500),
        "payout_recipient_id": payee.id,
        "payout_by_id": who.user_id,
        "payout_at": now,
    }
