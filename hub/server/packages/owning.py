"""What an environment's owners change after publishing: visibility, summary and tags, yanking
and un-yanking a version, moving it to an organisation. One set of checks for the API
(:mod:`.api`) and the environment's settings page (:mod:`.settings_pages`): something the
requester may not see is 404, something they see but do not own is 403. Every change bumps the
hub's generation (cached pages are stale).
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from hub.server.accounts import Principal, can_publish_as, get_owner
from hub.server.core import Environment, HubProblem, Owner, Problem, Version, bump, find_env

__all__ = [
    "MAX_SUMMARY",
    "MAX_TAGS",
    "owned_env",
    "owned_version",
    "set_about",
    "set_private",
    "set_yanked",
    "transfer",
]

MAX_SUMMARY = 500
MAX_TAGS = 20
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,39}$")


def owned_env(session: Session, who: Principal | None, owner: str, env_id: str, *, doing: str) -> Environment:
    """``owner/env_id`` when ``who`` may change it (``doing``: what, for the refusal)."""
    env = find_env(session, who, owner=owner, env_id=env_id)
    if env is None:
        raise HubProblem("no such environment", Problem.NOT_FOUND)
    if who is None or not who.allows("push") or not can_publish_as(session, who, env.owner):
        raise HubProblem(f"you may not {doing} {env.owner.name}/{env.env_id}", Problem.FORBIDDEN)
    return env


def owned_version(
    session: Session, who: Principal | None, owner: str, env_id: str, version: str, *, doing: str
) -> Version:
    """Version ``version`` of ``owner/env_id`` when ``who`` may change it."""
    env = find_env(session, who, owner=owner, env_id=env_id)
    found = [v for v in env.versions if v.version == version] if env is not None else []
    if env is None or not found:
        raise HubProblem("no such environment version", Problem.NOT_FOUND)
    owned_env(session, who, owner, env_id, doing=doing)
    return found[0]


def set_private(session: Session, data: Path, env: Environment, private: bool) -> None:
    env.private = private
    session.commit()
    bump(data)


def set_yanked(session: Session, data: Path, version: Version, *, yanked: bool, reason: str = "") -> None:
    """Yank (with a reason pip shows) or un-yank a version."""
    reason = reason.strip()
    if yanked and not reason:
        raise HubProblem("give a reason: ?reason=...")
    version.yanked, version.yank_reason = yanked, reason if yanked else ""
    session.commit()
    bump(data)


def set_about(session: Session, data: Path, env: Environment, *, summary: str, tags: str) -> list[str]:
    """The environment's summary and tags (comma or space separated, lowercase); the next
    reviewed version sets them again from its package metadata."""
    summary = " ".join(summary.split())
    if len(summary) > MAX_SUMMARY:
        raise HubProblem(f"a summary has at most {MAX_SUMMARY} characters")
    found = [t for t in re.split(r"[,\s]+", tags.strip().lower()) if t]
    wrong = [t for t in found if not _TAG.match(t)]
    if wrong:
        raise HubProblem(f"{wrong[0][:40]!r}: tags are lowercase letters, digits and _.+- (at most 40)")
    unique = list(dict.fromkeys(found))
    if len(unique) > MAX_TAGS:
        raise HubProblem(f"at most {MAX_TAGS} tags")
    env.summary, env.tags = summary, ",".join(unique)
    session.commit()
    bump(data)
    return unique


def transfer(session: Session, data: Path, who: Principal, env: Environment, to: str) -> Owner:
    """Move ``env`` (which ``who`` may change: :func:`owned_env`) to the organisation ``to``, of
    which ``who`` must be a member. Its versions, files, runs and distribution name go with it;
    its address becomes ``to/ID``. Refused when ``to`` already has an environment of that id."""
    target = get_owner(session, to.strip())
    if target is None or target.kind != "org":
        raise HubProblem(f"no organisation {to.strip()[:64]!r}", Problem.NOT_FOUND)
    if target.id == env.owner_id:
        raise HubProblem(f"{env.owner.name}/{env.env_id} already belongs to {target.name}", Problem.CONFLICT)
    if not can_publish_as(session, who, target):
        raise HubProblem(f"you are not a member of {target.name}", Problem.FORBIDDEN)
    taken = session.scalars(
        select(Environment.id).where(Environment.owner_id == target.id, Environment.env_id == env.env_id)
    ).first()
    if taken is not None:
        raise HubProblem(f"{target.name} already has an environment {env.env_id!r}", Problem.CONFLICT)
    env.owner_id = target.id
    session.commit()
    session.refresh(env)
    bump(data)
    return target
