"""Ingesting a pushed run (``verihub results push``): unpack, verify, bind, store, record.

Order of work, so that a refusal stores nothing: the archive is unpacked into a temporary folder
(:func:`hub.server.results.runpack.unpack_run`), verified with the leaderboard's own checks
(:func:`leaderboard.verify_run`; the summary recomputed from the rollouts is the one recorded)
and bound by its content hash to an environment version the pusher may see. Only then is the
archive stored as a blob and one transaction adds the :class:`hub.server.core.models.Run` row and
one row per rollout; a crash in between leaves at most an unreferenced blob (``verihub hub gc``).

The run is recorded under the authenticated pusher, private unless pushed public, with
``verify_state`` ``pending`` for the re-verification worker; the same run pushed again returns
the existing record. Its ``origin`` is always ``pushed``, whatever its files say: only the
worker's :func:`ingest_hub_run` records ``hub`` (:mod:`hub.server.results.hub_evals`).
"""

from __future__ import annotations

import json
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from hub.client import pack_run
from hub.registry import parse_ref
from hub.server.accounts import Principal
from hub.server.core import (
    PENDING,
    REGRADE_STATES,
    Environment,
    HubProblem,
    Limits,
    LocalStorage,
    Problem,
    Run,
    Version,
    find_env,
    visible_envs,
)
from hub.server.results.rollout_store import store_rollouts
from hub.server.results.runpack import unpack_run
from leaderboard import (
    BoardEntry,
    RunRejected,
    TokenPrices,
    VerifiedRun,
    clean_label,
    entry_from_run,
    verify_run,
)

__all__ = [
    "MAX_LABEL",
    "ORIGINS",
    "Ingested",
    "ResultError",
    "ingest_hub_run",
    "ingest_run",
    "new_public_id",
    "pack_run",
    "run_json",
    "run_label",
]

#: Longest label kept (the board entry's own cap).
MAX_LABEL = 120
#: Where a run comes from: pushed by a user, or run by the hub's worker against a named endpoint.
PUSHED, HUB = "pushed", "hub"
ORIGINS = (PUSHED, HUB)


class ResultError(HubProblem):
    """A pushed run was refused."""


@dataclass(frozen=True)
class Ingested:
    """The outcome of a push: the run's JSON, and False in ``created`` when it was there already."""

    run: dict[str, Any]
    created: bool


def new_public_id() -> str:
    """A run's public id: 16 URL-safe random characters, never starting with ``-`` (a command
    line would read ``verihub results set -Xy...`` as an unknown option)."""
    while True:
        candidate = secrets.token_urlsafe(12)
        if not candidate.startswith("-"):
            return candidate


def run_label(text: str | None) -> str:
    """A label as stored: one line of printable characters, at most :data:`MAX_LABEL` long."""
    cleaned = clean_label("".join(ch if ch.isprintable() else " " for ch in text or ""))
    return (cleaned or "")[:MAX_LABEL].strip()


def _report(text: str) -> Any:
    """The re-verification report: None before there is one, JSON when it is JSON, else text."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def run_json(run: Run, *, full: bool = True) -> dict[str, Any]:
    """What the API shows of a run (``full``: with its summary, board entry and report)."""
    env = run.version.environment
    summary = json.loads(run.summary)
    out: dict[str, Any] = {
        "id": run.public_id,
        "ref": f"{env.owner.name}/{env.env_id}",
        "version": run.version.version,
        "model": run.model,
        "owner": run.owner.name,
        "label": run.label,
        "private": run.private,
        "created_at": run.created_at.isoformat() + "Z",
        "verify_state": run.verify_state,  # the stored value; regrade_state says what it means
        "regrade_state": REGRADE_STATES.get(run.verify_state, run.verify_state),
        "origin": run.origin,  # "hub": the hub's worker ran it against ``endpoint``
        "pushed": run.origin != HUB,
        "endpoint": run.endpoint or None,
        "mean_reward": summary.get("mean_reward"),
        "n_tasks": summary.get("n_tasks"),
        "n_rollouts": summary.get("n_rollouts"),
    }
    if full:
        out["verify_report"] = _report(run.verify_report)
        out["summary"] = summary
        out["entry"] = json.loads(run.entry)
    return out


def _bind(session: Session, who: Principal, env_ref: str | None, v: VerifiedRun) -> Version:
    """The hub's version this run is of, or ResultError saying why there is none."""
    c = v.config
    if env_ref:
        try:
            owner, env_id, at = parse_ref(env_ref)
        except ValueError as exc:
            raise ResultError(f"--env: {exc}", Problem.INVALID) from exc
        if at is not None:
            raise ResultError(
                "--env takes OWNER/ID: the version is the one the run's config names", Problem.INVALID
            )
        env = find_env(session, who, owner=owner, env_id=env_id)
        if env is None:
            raise ResultError(f"no environment {owner}/{env_id} on this hub", Problem.NOT_FOUND)
        if env.env_id != c.env_id:
            raise ResultError(
                f"the run is of environment {c.env_id!r}, not of {owner}/{env_id}", Problem.UNPROCESSABLE
            )
    else:
        found = [e for e in visible_envs(session, who) if e.env_id == c.env_id]
        if not found:
            raise ResultError(
                f"this hub has no environment {c.env_id!r} you can see: push the environment first "
                "(`verihub push`), or name it with --env OWNER/ID",
                Problem.NOT_FOUND,
            )
        if len(found) > 1:
            refs = ", ".join(sorted(f"{e.owner.name}/{e.env_id}" for e in found))
            raise ResultError(
                f"several environments are {c.env_id!r} ({refs}); choose one with --env", Problem.CONFLICT
            )
        env = found[0]
    return _version(env, c.env_version, c.env_hash)


def _version(env: Environment, version: str, env_hash: str) -> Version:
    ref = f"{env.owner.name}/{env.env_id}"
    held = sorted(env.versions, key=lambda x: x.id)
    match = [x for x in held if x.version == version]
    if not match:
        have = ", ".join(x.version for x in held) or "none"
        raise ResultError(
            f"the run is of {ref}@{version}, a version this hub does not hold (it holds: {have}); "
            "push that version first",
            Problem.UNPROCESSABLE,
        )
    if match[0].content_hash != env_hash:
        raise ResultError(
            f"the run's environment hash {env_hash} differs from {ref}@{version}'s content hash "
            f"{match[0].content_hash}: the run was made with other code than the published version",
            Problem.UNPROCESSABLE,
        )
    return match[0]


def _existing(session: Session, owner_id: int, version_id: int, run_sha: str) -> Run | None:
    return session.scalars(
        select(Run).where(Run.owner_id == owner_id, Run.version_id == version_id, Run.run_sha256 == run_sha)
    ).first()


def ingest_run(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    who: Principal,
    upload: Path,
    *,
    env_ref: str | None = None,
    public: bool = False,
    label: str | None = None,
    prices: TokenPrices | None = None,
) -> Ingested:
    """Record the run archive ``upload`` under ``who`` (see the module's docstring); ``prices``
    cost the run's tokens where its rollouts recorded no cost (the pusher's statement)."""
    return _ingest(sessions, storage, limits, who, upload, env_ref, public, label, prices, (PUSHED, ""))


def ingest_hub_run(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    who: Principal,
    upload: Path,
    *,
    env_ref: str,
    endpoint: str,
    label: str | None = None,
) -> Ingested:
    """Record a run the hub's worker made itself (origin ``hub``, public) under ``who``, the admin
    who asked for it, with the same checks as a push; ``endpoint`` is the model's base URL."""
    return _ingest(sessions, storage, limits, who, upload, env_ref, True, label, None, (HUB, endpoint))


def _ingest(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    who: Principal,
    upload: Path,
    env_ref: str | None,
    public: bool,
    label: str | None,
    prices: TokenPrices | None,
    origin: tuple[str, str],
) -> Ingested:
    if not who.allows("push"):
        raise ResultError(
            f"this token's scope ({who.scope}) does not allow pushing; use a push token", Problem.FORBIDDEN
        )
    with tempfile.TemporaryDirectory(dir=storage.tmp, prefix="results-") as tmp:
        root = unpack_run(upload, Path(tmp) / "run", limits)
        try:
            verified = verify_run(root)
        except RunRejected as exc:
            raise ResultError(
                "the run does not verify: " + "; ".join(exc.reasons), Problem.UNPROCESSABLE
            ) from exc
    run_sha = verified.content_sha256.removeprefix("sha256:")
    with sessions() as session:
        version = _bind(session, who, env_ref, verified)
        old = _existing(session, who.user_id, version.id, run_sha)
        if old is not None:
            return Ingested(run_json(old), False)
        version_id = version.id
    archive_sha = storage.put_file(upload)
    public_id = new_public_id()
    entry = entry_from_run(verified, label=run_label(label) or None, owner=who.name, prices=prices)
    entry = entry.model_copy(update={"source": f"hub run {public_id}"})
    try:
        return _insert(
            sessions,
            who,
            version_id,
            run_sha,
            public_id,
            (archive_sha, upload),
            verified,
            entry,
            label,
            public,
            origin,
        )
    except IntegrityError:  # an identical push committed first (the unique index): that one is it
        with sessions() as session:
            won = _existing(session, who.user_id, version_id, run_sha)
            if won is None:
                raise
            return Ingested(run_json(won), False)


def _insert(
    sessions: sessionmaker[Session],
    who: Principal,
    version_id: int,
    run_sha: str,
    public_id: str,
    archive: tuple[str, Path],
    verified: VerifiedRun,
    entry: BoardEntry,
    label: str | None,
    public: bool,
    origin: tuple[str, str],
) -> Ingested:
    with sessions() as session, session.begin():
        old = _existing(session, who.user_id, version_id, run_sha)  # a concurrent push of it won
        if old is not None:
            return Ingested(run_json(old), False)
        run = Run(
            public_id=public_id,
            version_id=version_id,
            owner_id=who.user_id,
            model=verified.config.model[:200],
            label=run_label(label),
            private=not public,
            archive_sha256=archive[0],
            run_sha256=run_sha,
            entry=entry.model_dump_json(),
            summary=verified.summary.model_dump_json(),
            verify_state=PENDING,
            verify_report="",
            verify_attempts=0,
            verify_worker="",
            origin=origin[0],
            endpoint=origin[1][:300],
        )
        session.add(run)
        session.flush()
        store_rollouts(session, run, archive[1])  # the same transaction: all the rollouts or no run
        session.flush()
        session.refresh(run)
        return Ingested(run_json(run), True)
