"""What a requester may see: visible environments, the versions offered to installs, and runs.

Everything the server shows goes through here, so a private environment is invisible (404)
in the index, the API, search and pages alike. A version is *offered* when its review passed,
and its environment is not flagged as a look-alike; ``allow_unreviewed`` offers every version.
Yanked versions stay listed (PEP 592) but are marked. A pushed run is visible when its
environment is and the run is public, or to the user who pushed it (and to admins).
"""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, selectinload

from hub.server.accounts import Principal, visible_owner_ids
from hub.server.core.models import PASSED, EnvFile, Environment, Owner, Run, Version

__all__ = ["find_env", "find_file", "find_run", "offered", "search", "visible_envs", "visible_runs"]


def _visible(session: Session, who: Principal | None) -> object:
    owners = visible_owner_ids(session, who)
    if who is not None and who.is_admin and who.allows("admin"):
        return Environment.id.is_not(None)
    return or_(Environment.private.is_(False), Environment.owner_id.in_(owners))


def visible_envs(session: Session, who: Principal | None) -> list[Environment]:
    stmt = (
        select(Environment)
        .where(_visible(session, who))  # type: ignore[arg-type]
        .options(selectinload(Environment.owner), selectinload(Environment.versions))
        .order_by(Environment.project)
    )
    return list(session.scalars(stmt))


def find_env(
    session: Session, who: Principal | None, *, project: str | None = None, owner: str = "", env_id: str = ""
) -> Environment | None:
    """One environment by PEP 503 project name or by ``owner/env_id``, if ``who`` may see it."""
    stmt = select(Environment).where(_visible(session, who))  # type: ignore[arg-type]
    if project is not None:
        stmt = stmt.where(Environment.project == project)
    else:
        stmt = stmt.join(Owner, Environment.owner_id == Owner.id).where(
            Owner.name == owner, Environment.env_id == env_id
        )
    return session.scalars(
        stmt.options(selectinload(Environment.versions).selectinload(Version.files))
    ).first()


def offered(env: Environment, *, allow_unreviewed: bool = False) -> list[Version]:
    """Versions installs may get, oldest first."""
    if allow_unreviewed:
        return sorted(env.versions, key=lambda v: v.id)
    if env.flagged:
        return []
    return sorted((v for v in env.versions if v.state == PASSED), key=lambda v: v.id)


def find_file(session: Session, who: Principal | None, sha256: str, filename: str) -> EnvFile | None:
    """A file row (joined to a visible environment) by its sha256 and name."""
    stmt = (
        select(EnvFile)
        .join(Version, EnvFile.version_id == Version.id)
        .join(Environment, Version.environment_id == Environment.id)
        .where(EnvFile.sha256 == sha256, EnvFile.filename == filename, _visible(session, who))  # type: ignore[arg-type]
    )
    return session.scalars(stmt).first()


def search(session: Session, who: Principal | None, text: str = "", tag: str = "") -> list[Environment]:
    words = text.casefold().split()
    out = []
    for env in visible_envs(session, who):
        hay = " ".join((env.owner.name, env.env_id, env.distribution, env.summary, env.tags)).casefold()
        if all(w in hay for w in words) and (not tag or tag in env.tags.split(",")):
            out.append(env)
    return out


def _runs_visible(session: Session, who: Principal | None) -> object:
    if who is not None and who.is_admin and who.allows("admin"):
        return Run.id.is_not(None)
    mine = Run.owner_id == who.user_id if who is not None else Run.id.is_(None)
    return or_(Run.private.is_(False), mine)


def visible_runs(
    session: Session, who: Principal | None, *, env: Environment | None = None, version: Version | None = None
) -> list[Run]:
    """Runs ``who`` may see (of one environment or one version), oldest first.

    A run is shown only when its environment is visible too: a public run of a private
    environment stays invisible to those who cannot see the environment.
    """
    stmt = (
        select(Run)
        .join(Version, Run.version_id == Version.id)
        .join(Environment, Version.environment_id == Environment.id)
        .where(_visible(session, who), _runs_visible(session, who))  # type: ignore[arg-type]
        .options(selectinload(Run.owner), selectinload(Run.version))
        .order_by(Run.id)
    )
    if env is not None:
        stmt = stmt.where(Environment.id == env.id)
    if version is not None:
        stmt = stmt.where(Run.version_id == version.id)
    return list(session.scalars(stmt))


def find_run(session: Session, who: Principal | None, public_id: str) -> Run | None:
    """One run by its public id, if ``who`` may see it (else None: answer 404)."""
    stmt = (
        select(Run)
        .join(Version, Run.version_id == Version.id)
        .join(Environment, Version.environment_id == Environment.id)
        .where(Run.public_id == public_id, _visible(session, who), _runs_visible(session, who))  # type: ignore[arg-type]
        .options(selectinload(Run.owner), selectinload(Run.version).selectinload(Version.environment))
    )
    return session.scalars(stmt).first()
