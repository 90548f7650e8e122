"""Evaluations the hub runs itself: an admin names a reviewed version and an OpenAI-compatible
endpoint (``verihub hub eval``, ``POST /api/v1/hub-evals``); a worker runs it
(:mod:`hub.server.results.hub_eval_child`) and records the run with origin ``hub``.

The queue is the ``hub_evals`` table, a lease queue like the re-verification's
(:mod:`hub.server.core.leases`). The endpoint is stored as its base URL only: one with a user,
password, query or fragment is refused, so no credential can be stored with it. The API key is
never sent to the hub: ``api_key_env`` names an environment variable of the worker, read when the
evaluation runs and handed to that child alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session, sessionmaker

from hub.env import UsageError
from hub.registry import parse_ref
from hub.server.accounts import Principal
from hub.server.core import (
    PASSED,
    HubEval,
    HubProblem,
    Limits,
    LocalStorage,
    Problem,
    Queue,
    Run,
    claim_next,
    extend,
    find_env,
    utcnow,
)
from hub.server.results.runs import ResultError, ingest_hub_run, pack_run

__all__ = [
    "MAX_ATTEMPTS",
    "QUEUE",
    "TIMEOUT_S",
    "EvalClaim",
    "EvalRequest",
    "HubEvalError",
    "claim",
    "eval_json",
    "finish",
    "heartbeat",
    "queue_eval",
    "record_run",
]

MAX_ATTEMPTS = 2
#: The longest one hub evaluation may run before the worker kills it (seconds).
TIMEOUT_S = 3600.0
#: The most tasks and rollouts per task one hub evaluation may ask for.
MAX_TASKS, MAX_ROLLOUTS = 10_000, 64
QUEUED, DONE, ERROR = "queued", "done", "error"
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,99}")


class HubEvalError(HubProblem):
    """A hub evaluation was refused."""


@dataclass(frozen=True)
class EvalRequest:
    """What an admin asks for: ``ref`` is ``OWNER/ID@VERSION``."""

    ref: str
    model: str
    base_url: str
    api_key_env: str = ""
    num_tasks: int | None = None
    rollouts: int = 1
    seed: int = 0


@dataclass(frozen=True)
class EvalClaim:
    """An evaluation this worker now holds, with what the child needs."""

    eval_id: int
    attempt: int
    requester: Principal
    env_ref: str
    env_id: str
    content_hash: str
    wheel_sha256: str
    wheel_filename: str
    model: str
    base_url: str
    api_key_env: str
    num_tasks: int | None
    rollouts: int
    seed: int


def clean_endpoint(url: str) -> str:
    """``url`` as stored: an http(s) base URL without credentials, query or fragment."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HubEvalError(f"--base-url must be an http(s) URL, not {url!r}", Problem.INVALID)
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        raise HubEvalError(
            "--base-url must carry no user, password, query or fragment: name the worker's "
            "environment variable holding the key with --api-key-env",
            Problem.INVALID,
        )
    if len(url.strip()) > 300:
        raise HubEvalError("--base-url is longer than 300 characters", Problem.INVALID)
    return url.strip().rstrip("/")


def _check(req: EvalRequest) -> None:
    if not req.model.strip() or len(req.model) > 200:
        raise HubEvalError("--model must be a name of at most 200 characters", Problem.INVALID)
    if req.api_key_env and not _ENV_NAME.fullmatch(req.api_key_env):
        raise HubEvalError(
            "--api-key-env names an environment variable (A-Z, 0-9, _), not a key", Problem.INVALID
        )
    if req.num_tasks is not None and not 1 <= req.num_tasks <= MAX_TASKS:
        raise HubEvalError(f"-n must be between 1 and {MAX_TASKS}", Problem.INVALID)
    if not 1 <= req.rollouts <= MAX_ROLLOUTS:
        raise HubEvalError(f"--rollouts must be between 1 and {MAX_ROLLOUTS}", Problem.INVALID)


def queue_eval(sessions: sessionmaker[Session], who: Principal, req: EvalRequest) -> dict[str, Any]:
    """Queue ``req`` for a worker (admins only); returns the queued evaluation's JSON."""
    if not (who.is_admin and who.allows("admin")):
        raise HubEvalError(
            "only the hub's admins (with an admin token) may queue hub evaluations", Problem.FORBIDDEN
        )
    _check(req)
    base_url = clean_endpoint(req.base_url)
    try:
        owner, env_id, version = parse_ref(req.ref)
    except ValueError as exc:
        raise HubEvalError(str(exc), Problem.INVALID) from exc
    if version is None:
        raise HubEvalError("name the version: OWNER/ID@VERSION", Problem.INVALID)
    with sessions() as session, session.begin():
        env = find_env(session, who, owner=owner, env_id=env_id)
        found = next((v for v in env.versions if v.version == version), None) if env else None
        if found is None:
            raise HubEvalError(f"no version {req.ref} on this hub", Problem.NOT_FOUND)
        if found.state != PASSED or not any(f.kind == "wheel" for f in found.files):
            raise HubEvalError(
                f"{req.ref} has no reviewed wheel (review state {found.state}): only a version that "
                "passed its review is evaluated",
                Problem.CONFLICT,
            )
        row = HubEval(
            version_id=found.id,
            requester_id=who.user_id,
            model=req.model.strip(),
            base_url=base_url,
            api_key_env=req.api_key_env,
            num_tasks=req.num_tasks,
            rollouts=req.rollouts,
            seed=req.seed,
        )
        session.add(row)
        session.flush()
        return eval_json(row)


def eval_json(row: HubEval) -> dict[str, Any]:
    """What the API shows of a hub evaluation (never a key: only the variable's name)."""
    env = row.version.environment
    report: Any = json.loads(row.report) if row.report else None
    return {
        "id": row.id,
        "ref": f"{env.owner.name}/{env.env_id}@{row.version.version}",
        "model": row.model,
        "base_url": row.base_url,
        "api_key_env": row.api_key_env or None,
        "num_tasks": row.num_tasks,
        "rollouts": row.rollouts,
        "seed": row.seed,
        "state": row.state,
        "requested_by": row.requester.name,
        "run": report.get("run") if isinstance(report, dict) else None,
        "report": report,
    }


QUEUE = Queue(
    model=HubEval,
    claimable=lambda now: and_(
        HubEval.state == QUEUED, or_(HubEval.lease_until.is_(None), HubEval.lease_until < now)
    ),
    held=lambda worker: and_(HubEval.worker == worker, HubEval.state == QUEUED),
    worker=HubEval.worker,
    attempts=HubEval.attempts,
    lease_until=HubEval.lease_until,
)
"""Queued hub evaluations as a lease queue (:mod:`hub.server.core.leases`)."""


def _record(row: HubEval, state: str, report: dict[str, Any], run_id: int | None = None) -> None:
    row.state, row.report, row.run_id = state, json.dumps(report), run_id
    row.lease_until, row.finished_at = None, utcnow()


def claim(sessions: sessionmaker[Session], worker: str, lease_s: float) -> EvalClaim | None:
    """Take the next queued evaluation, or None when there is none."""
    while True:
        with sessions() as session, session.begin():
            row = claim_next(session, QUEUE, worker, lease_s)
            if row is None:
                return None
            if row.attempts > MAX_ATTEMPTS:
                reason = f"the evaluation stopped unfinished {MAX_ATTEMPTS} times (worker crash or timeout)"
                _record(row, ERROR, {"error": reason})
                continue
            version, requester = row.version, row.requester
            wheel = next((f for f in version.files if f.kind == "wheel"), None)
            env = version.environment
            return EvalClaim(
                eval_id=row.id,
                attempt=row.attempts,
                requester=Principal(requester.id, requester.name, "admin", requester.is_admin),
                env_ref=f"{env.owner.name}/{env.env_id}",
                env_id=env.env_id,
                content_hash=version.content_hash,
                wheel_sha256=wheel.sha256 if wheel is not None else "",
                wheel_filename=wheel.filename if wheel is not None else "",
                model=row.model,
                base_url=row.base_url,
                api_key_env=row.api_key_env,
                num_tasks=row.num_tasks,
                rollouts=row.rollouts,
                seed=row.seed,
            )


def heartbeat(sessions: sessionmaker[Session], claim: EvalClaim, worker: str, lease_s: float) -> bool:
    """Extend the lease; False when the evaluation is no longer this worker's."""
    with sessions() as session, session.begin():
        return extend(session, QUEUE, claim.eval_id, worker, lease_s)


def finish(
    sessions: sessionmaker[Session],
    claim: EvalClaim,
    worker: str,
    *,
    report: dict[str, Any],
    run_id: int | None = None,
) -> bool:
    """Record the outcome (``done`` with ``run_id``, else ``error``); False when the lease was lost."""
    with sessions() as session, session.begin():
        row = session.get(HubEval, claim.eval_id)
        if row is None or row.worker != worker or row.state != QUEUED or row.attempts != claim.attempt:
            return False
        _record(row, DONE if run_id is not None else ERROR, report, run_id)
        return True


def record_run(
    sessions: sessionmaker[Session],
    storage: LocalStorage,
    limits: Limits,
    claim: EvalClaim,
    out: Path,
    key: str,
) -> tuple[dict[str, Any], int | None]:
    """Record the run the child wrote under ``out`` as a hub run (origin ``hub``, the endpoint,
    under the admin who asked); returns (the report, the run's row id or None). A run whose files
    hold ``key`` (an endpoint that echoed it) is not recorded."""
    error = json.loads((out / "outcome.json").read_text(encoding="utf-8")).get("error")
    if error:
        return {"error": str(error)}, None
    run_dir = out / "run"
    if key and any(key.encode() in p.read_bytes() for p in run_dir.iterdir() if p.is_file()):
        return {"error": "the run's files hold the endpoint's key: not recorded"}, None
    try:
        archive = pack_run(run_dir, out / "run.tar.gz")
        got = ingest_hub_run(
            sessions,
            storage,
            limits,
            claim.requester,
            archive,
            env_ref=claim.env_ref,
            endpoint=claim.base_url,
        )
    except (ResultError, UsageError) as exc:
        return {"error": f"the run was not recorded: {exc}"}, None
    with sessions() as session:
        run_id = session.scalars(select(Run.id).where(Run.public_id == got.run["id"])).one()
    return {"error": None, "run": got.run["id"]}, run_id
