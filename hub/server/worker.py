"""The worker: takes review jobs, then pushed runs to re-verify, then evaluations the hub runs
itself (:mod:`hub.server.results.hub_evals`), from the database queues and runs each in a child
process.

``verihub hub worker --db URL --data DIR`` runs one on any machine that reaches the database and
the artifact store; ``verihub hub serve`` on SQLite starts one itself. Reviews keep priority. While
a child runs, the single-threaded worker renews the lease every third of ``lease_s`` and kills
the child past its time limit; when the worker dies the lease runs out and another takes the
work again. With ``parent_pid`` set it exits once that process is gone.

Children run package code, so they get only the paths they need on the command line and a few
named variables (:data:`CHILD_ENV`), never the database URL or the hub's other settings (a hub
evaluation's child also gets its endpoint's key variable, cleaned out of what it reports). What
they report is cleaned (:mod:`hub.server.core.redact`) before it is stored.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy.orm import Session, sessionmaker

from hub.review import BUILD_LIMITS
from hub.sandbox import Limits
from hub.server.core import (
    CHILD_ENV,
    VERIFY_ERROR,
    HubConfig,
    LocalStorage,
    Redactor,
    bump,
    hub_secrets,
    make_engine,
    sessions,
)
from hub.server.results import MAX_TASKS_BYTES, hub_evals, reverify
from hub.server.reviews import (
    MAX_ATTEMPTS,
    MAX_SCALE,
    calibrate,
    claim,
    finish,
    heartbeat,
    host_load,
    outcome,
    release,
)

__all__ = ["CHILD_ENV", "child_env", "work"]

log = logging.getLogger("verihub.worker")

#: A review's child runs three sandboxes in turn (the wheel build, the check, the regrade of the
#: smoke run), each ended by its own wall-clock limit; past their sum and a minute of start-up
#: the child is hung, and the worker kills it (minutes, not the hour a stalled call used to take).
_REVIEW_TIMEOUT_S = BUILD_LIMITS.wall_s + 2 * Limits().wall_s + 60.0
#: What one step of the loop did: nothing to take, finished a job, or dropped it (lease lost,
#: parent gone, blob missing: recorded elsewhere or by the next worker).
_Step = Literal["idle", "done", "dropped"]


def child_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a review or re-verification child: the allow-listed names only."""
    source = os.environ if environ is None else environ
    return {k: source[k] for k in CHILD_ENV if k in source}


def _parent_gone(parent_pid: int | None) -> bool:
    return parent_pid is not None and os.getppid() != parent_pid


@dataclass(frozen=True)
class _Worker:
    config: HubConfig
    make: sessionmaker[Session]
    storage: LocalStorage
    name: str
    parent_pid: int | None
    redactor: Redactor
    time_scale: float = 1.0  #: the review's time limits' factor (hub.server.reviews.hostspeed)


@dataclass(frozen=True)
class _Child:
    """How a child process ended: ``abandoned`` when the lease was lost or the parent is gone."""

    abandoned: bool
    timed_out: bool
    stderr_tail: str
    duration_s: float


def _run_child(
    w: _Worker,
    cmd: list[str],
    beat: Callable[[], bool],
    timeout_s: float,
    tmp: Path,
    extra_env: Mapping[str, str] | None = None,
) -> _Child:
    """Run ``cmd``, calling ``beat`` (the lease heartbeat) every third of the lease."""
    started = time.monotonic()
    lost = timed_out = False
    with (tmp / "stderr.txt").open("w+", encoding="utf-8", errors="replace") as err:
        env = {**child_env(), **(extra_env or {})}
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True, env=env)
        while proc.poll() is None:
            try:
                proc.wait(timeout=max(w.config.lease_s / 3, 0.2))
            except subprocess.TimeoutExpired:
                lost = not beat()
                timed_out = time.monotonic() - started > timeout_s
                if lost or timed_out or _parent_gone(w.parent_pid):
                    proc.kill()
                    proc.wait()
                    break
        err.seek(0)
        tail = [ln for ln in err.read().splitlines() if ln.strip()][-3:]
    return _Child(lost or _parent_gone(w.parent_pid), timed_out, " | ".join(tail), time.monotonic() - started)


def _review_next(w: _Worker) -> _Step:
    job = claim(w.make, w.name, w.config.lease_s)
    if job is None:
        return "idle"
    if not w.storage.exists(job.bundle_sha256):
        problem = f"the bundle blob {job.bundle_sha256} is missing from the artifact store"
        finish(w.make, job, w.name, passed=False, report={"passed": False, "problems": [problem]})
        bump(w.config.data)
        return "dropped"
    with tempfile.TemporaryDirectory(prefix="verihub-job-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "hub.server.reviews.review_child",
            str(w.storage.path(job.bundle_sha256)),
            str(out),
        ]
        if w.config.review_fast:
            cmd.append("--fast")
        if w.time_scale != 1.0:
            cmd += ["--time-scale", str(w.time_scale)]
        load_before = host_load()
        child = _run_child(
            w,
            cmd,
            lambda: heartbeat(w.make, job, w.name, w.config.lease_s),
            _REVIEW_TIMEOUT_S * w.time_scale,
            Path(tmp),
        )
        if child.abandoned:
            return "dropped"
        if out.is_file():
            report = json.loads(out.read_text(encoding="utf-8"))
        else:
            report = {"passed": False, "problems": [f"the review process failed: {child.stderr_tail}"]}
    report = w.redactor.value(report)
    report["duration_s"] = round(child.duration_s, 2)
    report["attempt"] = job.attempt
    load = max(load_before, host_load())
    verdict = outcome(report, attempt=job.attempt, max_attempts=MAX_ATTEMPTS, load_per_core=load)
    if verdict == "retry":
        log.info(
            "review job %s (attempt %s) ran past its time limits at load %.2f per core: queued again",
            job.job_id,
            job.attempt,
            load,
        )
        release(w.make, job, w.name)
        return "done"
    if verdict == "error":
        report["problems"] = [
            *report.get("problems", []),
            f"the hub's host was too loaded to judge this package's speed (load {load:.2f} per core, "
            f"{job.attempt} tries): the hub's fault, not the package's; ask its operator or push again",
        ]
    finish(w.make, job, w.name, passed=verdict == "passed", report=report, error=verdict == "error")
    bump(w.config.data)
    log.info("review job %s (attempt %s): %s in %.1f s", job.job_id, job.attempt, verdict, child.duration_s)
    return "done"


def _store_tasks(storage: LocalStorage, tasks: Path) -> dict[str, Any]:
    """Store the environment's tasks the child wrote (when it wrote any) as a blob; what the run's
    report records about them (``tasks_sha256``, or why they were not kept)."""
    if not tasks.is_file() or tasks.stat().st_size == 0:
        return {}
    if tasks.stat().st_size > MAX_TASKS_BYTES:  # the child keeps to the cap: this is a safeguard
        return {"tasks_skipped": f"the tasks file exceeds {MAX_TASKS_BYTES >> 20} MiB"}
    return {"tasks_sha256": storage.put_file(tasks)}


def _reverify_next(w: _Worker) -> _Step:
    run = reverify.claim(w.make, w.name, w.config.lease_s)
    if run is None:
        return "idle"
    problem = reverify.missing_blob(w.storage, run)
    if problem is not None:
        report = {"error": problem, "attempt": run.attempt}
        reverify.finish(w.make, run, w.name, state=VERIFY_ERROR, report=report)
        bump(w.config.data)
        return "dropped"
    with tempfile.TemporaryDirectory(prefix="verihub-reverify-job-") as tmp:
        out, tasks = Path(tmp) / "outcome.json", Path(tmp) / "tasks.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "hub.server.results.reverify_child",
            str(w.storage.path(run.archive_sha256)),
            str(w.storage.path(run.wheel_sha256)),
            run.wheel_filename,
            str(out),
            "--share",
            str(w.config.reverify_share),
            "--tasks",
            str(tasks),
        ]
        beat = lambda: reverify.heartbeat(w.make, run, w.name, w.config.lease_s)  # noqa: E731
        child = _run_child(w, cmd, beat, reverify.TIMEOUT_S, Path(tmp))
        if child.abandoned:
            return "dropped"
        state, report = VERIFY_ERROR, {"share": w.config.reverify_share}
        if out.is_file():
            outcome: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
            state, report = outcome["state"], outcome["report"]
            report.update(_store_tasks(w.storage, tasks))
        elif child.timed_out:
            report["error"] = f"the re-verification took longer than {reverify.TIMEOUT_S:g}s"
        else:
            report["error"] = f"the re-verification process failed: {child.stderr_tail}"
    report = w.redactor.value(report)
    report["duration_s"] = round(child.duration_s, 2)
    report["attempt"] = run.attempt
    reverify.finish(w.make, run, w.name, state=state, report=report)
    bump(w.config.data)
    log.info(
        "re-grade of run %s (attempt %s): %s in %.1f s", run.public_id, run.attempt, state, child.duration_s
    )
    return "done"


def _hub_eval_next(w: _Worker) -> _Step:
    job = hub_evals.claim(w.make, w.name, w.config.lease_s)
    if job is None:
        return "idle"
    if not job.wheel_sha256 or not w.storage.exists(job.wheel_sha256):
        report: dict[str, Any] = {"error": "the version's wheel is missing from the artifact store"}
        hub_evals.finish(w.make, job, w.name, report=report)
        return "dropped"
    key = os.environ.get(job.api_key_env, "") if job.api_key_env else ""
    redactor = Redactor.of([*w.redactor.secrets, key] if key else w.redactor.secrets)
    with tempfile.TemporaryDirectory(prefix="verihub-hub-eval-") as tmp:
        spec = {
            "env_id": job.env_id,
            "content_hash": job.content_hash,
            "model": job.model,
            "base_url": job.base_url,
            "api_key_env": job.api_key_env,
            "num_tasks": job.num_tasks,
            "rollouts": job.rollouts,
            "seed": job.seed,
            "wall_s": hub_evals.TIMEOUT_S,
        }
        (Path(tmp) / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        out = Path(tmp) / "out"
        out.mkdir()
        cmd = [
            sys.executable,
            "-m",
            "hub.server.results.hub_eval_child",
            str(w.storage.path(job.wheel_sha256)),
            job.wheel_filename,
            str(Path(tmp) / "spec.json"),
            str(out),
        ]
        beat = lambda: hub_evals.heartbeat(w.make, job, w.name, w.config.lease_s)  # noqa: E731
        extra = {job.api_key_env: key} if key else {}
        child = _run_child(w, cmd, beat, hub_evals.TIMEOUT_S, Path(tmp), extra)
        if child.abandoned:
            return "dropped"
        if (out / "outcome.json").is_file():
            report, run_id = hub_evals.record_run(w.make, w.storage, w.config.limits, job, out, key)
        else:
            why = "took too long" if child.timed_out else f"failed: {child.stderr_tail}"
            report, run_id = {"error": f"the evaluation process {why}"}, None
    report = redactor.value(report)
    report["duration_s"] = round(child.duration_s, 2)
    hub_evals.finish(w.make, job, w.name, report=report, run_id=run_id)
    bump(w.config.data)
    log.info("hub evaluation %s (attempt %s) in %.1f s: %s", job.eval_id, job.attempt, child.duration_s,
             "recorded" if run_id is not None else report.get("error"))  # fmt: skip
    return "done"


def _time_scale(config: HubConfig) -> float:
    """The factor of this worker's review time limits: the operator's, else this host's calibration."""
    if config.review_time_scale is not None:
        log.info("review time limits x%.2f (VERIHUB_HUB_REVIEW_TIME_SCALE)", config.review_time_scale)
        return config.review_time_scale
    speed = calibrate()
    log.info("host calibration: %s", speed)
    if speed.scale >= MAX_SCALE:
        log.warning(
            "this host is at least %gx slower than the reference: reviews may end in error", MAX_SCALE
        )
    return speed.scale


def work(config: HubConfig, *, once: bool = False, poll_s: float = 1.0, parent_pid: int | None = None) -> int:
    """Run reviews, then re-verifications, then hub evaluations, until stopped (or, with ``once``,
    until the queues are empty); returns the jobs done."""
    engine = make_engine(config.database)
    w = _Worker(
        config,
        sessions(engine),
        LocalStorage(config.data),
        f"{socket.gethostname()}:{os.getpid()}",
        parent_pid,
        Redactor.of(hub_secrets(config.db_url, str(config.data.resolve()))),
        _time_scale(config),
    )
    stopping = threading.Event()
    if threading.current_thread() is threading.main_thread():

        def _stop(signum: int, _frame: object) -> None:
            log.info(
                "worker %s: %s received; stopping after the current job", w.name, signal.Signals(signum).name
            )
            stopping.set()

        signal.signal(signal.SIGTERM, _stop)
    log.info("worker %s started (data %s, lease %g s)", w.name, config.data, config.lease_s)
    done = 0
    while not _parent_gone(parent_pid) and not stopping.is_set():
        step = _review_next(w)
        if step == "idle":
            step = _reverify_next(w)
        if step == "idle":
            step = _hub_eval_next(w)
        if step == "done":
            done += 1
        elif step == "idle":
            if once:
                break
            stopping.wait(poll_s)
    engine.dispose()
    log.info("worker %s stopped after %d job(s)", w.name, done)
    return done
