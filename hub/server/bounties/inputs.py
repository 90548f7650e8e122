"""The inputs of bounty requests, checked and resolved, and the error every refusal raises.

A deadline in either accepted form, the bounty's texts within their limits, the version a
claimant submits (one that exists, that they may publish as, not yanked; someone else's private
version is refused exactly like a missing one), and the payout record's values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from hub.server.accounts import Principal, can_publish_as, get_owner
from hub.server.models import Bounty
from hub.server.names import parse_ref
from hub.server.queries import find_env

__all__ = ["BountyError", "checked_text", "parse_deadline", "payout_values", "submitted_version"]


class BountyError(Exception):
    """A bounty request was refused; ``status`` is the HTTP status (400, 403, 404 or 409)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def parse_deadline(text: str) -> dt.datetime:
    """``YYYY-MM-DD`` (the end of that day, 23:59:59 UTC) or an ISO date and time -> naive UTC."""
    text = text.strip()
    try:
        if len(text) == 10:
            return dt.datetime.fromisoformat(text) + dt.timedelta(days=1, seconds=-1)
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise BountyError(f"deadline {text!r}: use YYYY-MM-DD or YYYY-MM-DDTHH:MM[Z]", 400) from exc
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return when


def checked_text(value: str, what: str, limit: int) -> str:
    """``value`` stripped; 400 when it is empty or longer than ``limit``."""
    value = value.strip()
    if not value:
        raise BountyError(f"give the bounty's {what}", 400)
    if len(value) > limit:
        raise BountyError(f"the {what} is {len(value)} characters; at most {limit}", 400)
    return value


def submitted_version(session: Session, who: Principal, ref: str) -> dict[str, Any]:
    """The bounty fields for submitting ``OWNER/ID@VERSION`` (its version id)."""
    try:
        owner, env_id, version = parse_ref(ref.strip())
    except ValueError as exc:
        raise BountyError(str(exc), 400) from exc
    if version is None:
        raise BountyError("name the version you submit: OWNER/ID@VERSION", 400)
    env = find_env(session, who, owner=owner, env_id=env_id)
    found = [v for v in env.versions if v.version == version] if env is not None else []
    if env is None or not found:
        raise BountyError(
            f"no environment version {owner}/{env_id}@{version} on this hub; push it first", 400
        )
    if not can_publish_as(session, who, env.owner):
        raise BountyError(f"you may not publish as {owner}, so {owner}/{env_id} is not yours to submit", 403)
    if found[0].yanked:
        raise BountyError(f"{owner}/{env_id}@{version} is yanked; submit another version", 409)
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
        raise BountyError(f"the payout of bounty {bounty.id} is already recorded", 409)
    if not reference.strip():
        raise BountyError("give the payment's reference (a transfer id, an invoice number)", 400)
    payee = get_owner(session, recipient.strip()) if recipient.strip() else bounty.claimant
    if payee is None:
        raise BountyError(f"no user or organisation {recipient!r} to pay", 400)
    return {
        "payout_amount": checked_text(amount or bounty.reward, "payout amount", 200),
        "payout_reference": checked_text(reference, "payout reference", 500),
        "payout_recipient_id": payee.id,
        "payout_by_id": who.user_id,
        "payout_at": now,
    }
