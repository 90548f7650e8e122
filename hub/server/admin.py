"""Administration on a hub's own data (``verihub hub user/org/token/status/yank/approve``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hub.env import UsageError
from hub.registry import parse_ref
from hub.server.core import Environment, HubConfig, Owner, Version, bump, make_engine, migrate, sessions

__all__ = ["approve", "backfill_rollouts", "collect_garbage", "open_hub", "status", "yank"]


@contextmanager
def open_hub(config: HubConfig, *, create: bool = True) -> Iterator[Session]:
    """A session on the hub's database (migrated first), committed when the block succeeds."""
    config.data.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database)
    try:
        if create:
            migrate(engine)
        with sessions(engine)() as session, session.begin():
            yield session
        bump(config.data)  # whatever changed, cached index pages are stale now
    finally:
        engine.dispose()


def _env(session: Session, ref: str) -> tuple[Environment, str | None]:
    try:
        owner, env_id, version = parse_ref(ref)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    env = session.scalars(
        select(Environment)
        .join(Owner, Environment.owner_id == Owner.id)
        .where(Owner.name == owner, Environment.env_id == env_id)
    ).first()
    if env is None:
        raise UsageError(f"no environment {owner}/{env_id} on this hub")
    return env, version


def _version(env: Environment, version: str | None, ref: str) -> Version:
    found = [v for v in env.versions if version is None or v.version == version]
    if not found:
        raise UsageError(f"{ref}: no such version (have {', '.join(v.version for v in env.versions)})")
    return max(found, key=lambda v: v.id)


def status(session: Session, ref: str) -> list[dict[str, Any]]:
    """Review state and report of one version, or of every version."""
    env, version = _env(session, ref)
    chosen = [_version(env, version, ref)] if version else sorted(env.versions, key=lambda v: v.id)
    return [
        {
            "ref": f"{env.owner.name}/{env.env_id}@{v.version}",
            "state": v.state,
            "yanked": v.yank_reason if v.yanked else None,
            "flagged": env.flagged or None,
            "private": env.private,
            "report": json.loads(v.report) if v.report else None,
        }
        for v in chosen
    ]


def yank(session: Session, ref: str, reason: str) -> str:
    env, version = _env(session, ref)
    if version is None:
        raise UsageError("name the version to yank: OWNER/ID@VERSION")
    if not reason.strip():
        raise UsageError("--reason is required: say why the version is withdrawn")
    v = _version(env, version, ref)
    v.yanked, v.yank_reason = True, reason.strip()
    return f"{env.owner.name}/{env.env_id}@{v.version}"


def approve(session: Session, ref: str) -> str:
    """Clear the look-alike flag of an environment after a person looked at it."""
    env, _ = _env(session, ref)
    env.flagged = ""
    return f"{env.owner.name}/{env.env_id}"


def collect_garbage(config: HubConfig) -> list[str]:
    """Remove blobs no file row or pushed run refers to (a run: its archive, and the environment
    tasks its re-verification stored, ``tasks_sha256`` in its report) and leftover temporary files;
    returns the removed hashes. Run it while no push or re-verification is in flight (both store
    their blobs before they commit)."""
    from hub.server.core import EnvFile, LocalStorage, Run
    from hub.server.results import stored_tasks_sha

    with open_hub(config) as session:
        rows = session.execute(select(EnvFile.sha256, EnvFile.metadata_sha256)).all()
        runs = session.execute(select(Run.archive_sha256, Run.verify_report)).all()
    referenced = {h for row in rows for h in row if h}
    referenced |= {h for archive, report in runs for h in (archive, stored_tasks_sha(report)) if h}
    return LocalStorage(config.data).sweep(referenced)


def backfill_rollouts(config: HubConfig) -> list[Any]:
    """Store the rollouts of runs pushed before the hub kept them one by one (for the run pages);
    returns a :class:`hub.server.results.rollout_store.Backfilled` per run it looked at. Safe while
    the hub runs (each run is one transaction) and to run again (done runs are skipped)."""
    from hub.server.core import LocalStorage
    from hub.server.results import backfill

    config.data.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database)
    try:
        migrate(engine)
        done: list[Any] = list(backfill(sessions(engine), LocalStorage(config.data)))
    finally:
        engine.dispose()
    bump(config.data)
    return done
