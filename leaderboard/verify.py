"""Integrity checks of a run directory before it may enter a board; all of these must hold:

- ``config.json`` names the environment version and a ``sha256:`` content hash, and fixes the
  task count;
- every rollout line parses, and every (task, rollout_index) of the configured tasks x rollouts
  appears exactly once (nothing dropped, nothing duplicated, nothing extra);
- each rollout record is consistent on its own: one without an error has a (non-error) grade
  and exactly its score and pass flag; an errored one has no reward, pass flag or verdict;
- ``summary.json``, recomputed from ``rollouts.jsonl`` with :class:`hub.run.metrics.SummaryBuilder`,
  equals the recorded one within float tolerance, and agrees with the config;
- optionally (``check_tasks``), the task ids are those the installed environment selects.

:func:`verify_run` collects every reason at once and raises :class:`RunRejected` listing them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.env import Rollout, RunDirError, UsageError
from hub.run import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunConfig, RunDir, Summary, SummaryBuilder
from leaderboard.tasks import check_task_ids

__all__ = ["RunRejected", "VerifiedRun", "file_sha256", "verify_run"]

_HASH_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
_MAX_LISTED = 5


class RunRejected(UsageError):
    """A run failed the integrity checks; ``reasons`` says why, one line each."""

    def __init__(self, path: Path, reasons: list[str]) -> None:
        self.path = path
        self.reasons = list(reasons)
        super().__init__(
            f"run {path} refused: "
            + "; ".join(self.reasons)
            + ". Re-run or resume it with `verihub eval`, then add it again"
        )


@dataclass(frozen=True)
class VerifiedRun:
    """A run that passed :func:`verify_run`, with what the board needs from it."""

    path: Path
    config: RunConfig
    summary: Summary
    """The summary recomputed from the rollouts (equal to ``summary.json`` within tolerance)."""
    task_means: tuple[float, ...]
    """Mean reward per graded task, the unit of the bootstrap."""
    task_weights: tuple[int, ...]
    """Graded rollouts per task, aligned with ``task_means`` (the bootstrap's weights)."""
    cost_usd: float | None
    """Total cost when every rollout records ``extra["cost_usd"]``, else None."""
    sha256: dict[str, str]
    """Content hash of each file of the run, by file name."""
    tasks_checked: bool = False
    """True when the task set was re-derived from the installed environment and matched."""
    content_sha256: str = ""
    """``sha256:`` of the run's content, independent of formatting: the config's identity (the
    fields a resume must match, so not ``created_at``) and the set of rollouts, each re-serialised
    canonically. Two directories with the same content are the same run (reordered lines,
    re-indented JSON, another start date)."""


def file_sha256(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def verify_run(
    path: str | os.PathLike[str],
    *,
    check_tasks: bool = False,
    rel_tol: float = 1e-9,
    abs_tol: float = 1e-9,
) -> VerifiedRun:
    """Check the run in ``path``; return it verified or raise :class:`RunRejected`.

    With ``check_tasks`` the task set is also re-derived from the installed environment (which
    must be the run's version and hash), see :func:`leaderboard.tasks.check_task_ids`.
    """
    rundir = RunDir(path)
    run_path = rundir.path
    reasons: list[str] = []
    for name in (CONFIG_FILE, SUMMARY_FILE, ROLLOUTS_FILE):
        # a FIFO or a device (a link to /dev/zero) would block or never end the reads below
        if (run_path / name).exists() and not (run_path / name).is_file():
            raise RunRejected(run_path, [f"{name} is not a regular file"])
    try:
        config = rundir.load_config()
    except RunDirError as exc:
        raise RunRejected(run_path, [str(exc)]) from exc
    try:
        recorded = rundir.load_summary()
    except RunDirError as exc:
        raise RunRejected(run_path, [str(exc)]) from exc
    if not rundir.rollouts_path.exists():
        raise RunRejected(run_path, [f"no {ROLLOUTS_FILE}: the summary cannot be checked"])
    if rundir.rollouts_path.stat().st_size and not _ends_with_newline(rundir.rollouts_path):
        raise RunRejected(run_path, [f"{ROLLOUTS_FILE} ends in a torn line (an interrupted run)"])

    hashes = _hashes(run_path)
    reasons += _check_config(config)
    now = time.time()

    task_ids = [t.task_id for t in recorded.per_task]
    if len(set(task_ids)) != len(task_ids):
        reasons.append(f"{SUMMARY_FILE} lists a task more than once")
    if config.num_tasks is not None and len(set(task_ids)) != config.num_tasks:
        reasons.append(
            f"{SUMMARY_FILE} lists {len(set(task_ids))} tasks but the config selected {config.num_tasks}"
        )

    if check_tasks and not reasons:
        reasons += check_task_ids(config, task_ids)

    scan = _scan_rollouts(rundir, config, task_ids, abs_tol=abs_tol)
    reasons += scan.reasons
    reasons += _check_dates(config, scan.first_start, now)
    recomputed = scan.builder.build()
    reasons += _compare_summaries(recorded, recomputed, rel_tol=rel_tol, abs_tol=abs_tol)
    if recorded.env_version and recorded.env_version != config.env_version:
        reasons.append(
            f"{SUMMARY_FILE} says env version {recorded.env_version} but the config says {config.env_version}"
        )
    if _hashes(run_path) != hashes:
        reasons.append("the run's files changed while they were being checked")
    if reasons:
        raise RunRejected(run_path, reasons)

    graded = [t for t in recomputed.per_task if t.mean_reward is not None]
    task_means = tuple(t.mean_reward for t in graded if t.mean_reward is not None)
    return VerifiedRun(
        path=run_path,
        config=config,
        summary=recomputed,
        task_means=task_means,
        task_weights=tuple(t.n for t in graded),
        cost_usd=scan.cost_usd,
        tasks_checked=check_tasks,
        sha256=hashes,
        content_sha256=_content_sha256(config, scan.digests),
    )


class _Scan:
    """One pass over ``rollouts.jsonl``: the recomputed summary and what is wrong with the file."""

    def __init__(self, builder: SummaryBuilder) -> None:
        self.builder = builder
        self.reasons: list[str] = []
        self.cost_usd: float | None = None
        self.first_start: float | None = None
        """Earliest ``timing.started_at`` of the rollouts."""
        self.digests: list[bytes] = []
        """sha256 of each rollout record, canonically serialised."""


def _scan_rollouts(rundir: RunDir, config: RunConfig, task_ids: list[str], *, abs_tol: float) -> _Scan:
    builder = SummaryBuilder(
        env_id=config.env_id,
        env_version=config.env_version,
        model=config.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for tid in task_ids:
        builder.add_task(tid)
    scan = _Scan(builder)
    known = set(task_ids)
    seen: set[tuple[str, int]] = set()
    dupes: list[tuple[str, int]] = []
    extra: list[tuple[str, int]] = []
    by_problem: dict[str, list[tuple[str, int]]] = {kind: [] for kind in _RECORD_PROBLEMS}
    costs: list[float] = []
    bad_costs: list[tuple[str, int]] = []
    try:
        for r in rundir.iter_rollouts():
            key = (r.task_id, r.rollout_index)
            if key in seen:
                dupes.append(key)
                continue
            seen.add(key)
            canonical = json.dumps(r.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
            scan.digests.append(hashlib.sha256(canonical.encode()).digest())
            if r.task_id not in known or r.rollout_index >= config.rollouts_per_task:
                extra.append(key)
            problem = _record_problem(r, abs_tol=abs_tol)
            if problem is not None:
                by_problem[problem].append(key)
            start = r.timing.started_at
            if math.isfinite(start) and (scan.first_start is None or start < scan.first_start):
                scan.first_start = start
            cost = r.extra.get("cost_usd")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool):
                if math.isfinite(cost) and cost >= 0:
                    costs.append(float(cost))
                else:
                    bad_costs.append(key)
            builder.add(r)
    except RunDirError as exc:
        scan.reasons.append(str(exc))
        return scan
    expected = {(t, i) for t in known for i in range(config.rollouts_per_task)}
    missing = sorted(expected - seen)
    if dupes:
        scan.reasons.append(f"{len(dupes)} rollouts recorded twice: {_keys(dupes)}")
    if missing:
        scan.reasons.append(f"{len(missing)} of {len(expected)} rollouts missing: {_keys(missing)}")
    if extra:
        scan.reasons.append(f"{len(extra)} rollouts outside the configured tasks x rollouts: {_keys(extra)}")
    for kind, keys in by_problem.items():
        if keys:
            scan.reasons.append(f"{len(keys)} rollouts {_RECORD_PROBLEMS[kind]}: {_keys(keys)}")
    if bad_costs:
        scan.reasons.append(
            f"{len(bad_costs)} rollouts record a cost_usd that is not a finite, non-negative number: "
            + _keys(bad_costs)
        )
    if costs and len(costs) == builder.n_rollouts:
        scan.cost_usd = sum(costs)
    return scan


_RECORD_PROBLEMS = {  # what _record_problem returns -> how a refusal states it (in this order)
    "contradicts": "have a reward or pass flag that contradicts their grade",
    "ungraded": "have no error but no valid grade either (a reward or pass flag with no grade, "
    "or a grader error recorded as a verdict)",
    "errored": "are marked as errors yet carry a reward, a pass flag or a verdict",
}


def _record_problem(r: Rollout, *, abs_tol: float) -> str | None:
    """What is wrong with one rollout record on its own, as the runner writes them
    (:func:`hub.run.runner.with_grade`): a rollout without an error carries a non-error grade and
    exactly its score and pass flag; an errored one carries no reward, no pass flag and at most a
    grader-error grade. Returns ``"contradicts"``, ``"ungraded"``, ``"errored"`` or None.

    The grade's score is bounded to [0, 1] by :class:`graders.grade.Grade`, so requiring it also
    keeps rewards out of ``[0, 1]`` (negative, above 1, inf, NaN) off the board.
    """
    if r.error is None:
        if r.grade is None or r.grade.is_error or r.reward is None:
            return "ungraded"
        close = math.isclose(r.reward, r.grade.score, rel_tol=0.0, abs_tol=abs_tol)
        if not close or r.passed != r.grade.passed:
            return "contradicts"
        return None
    if r.reward is not None or r.passed or (r.grade is not None and not r.grade.is_error):
        return "errored"
    return None


def _content_sha256(config: RunConfig, digests: list[bytes]) -> str:
    h = hashlib.sha256(json.dumps(config.identity(), sort_keys=True, separators=(",", ":")).encode())
    for d in sorted(digests):
        h.update(d)
    return "sha256:" + h.hexdigest()


def _hashes(run_path: Path) -> dict[str, str]:
    return {name: file_sha256(run_path / name) for name in (CONFIG_FILE, SUMMARY_FILE, ROLLOUTS_FILE)}


def _check_config(config: RunConfig) -> list[str]:
    reasons: list[str] = []
    if not config.env_version.strip():
        reasons.append(f"{CONFIG_FILE} does not name the environment version")
    if not _HASH_RE.match(config.env_hash):
        reasons.append(
            f"{CONFIG_FILE} has no environment content hash (env_hash must be 'sha256:' + 64 hex digits)"
        )
    if config.num_tasks is None:
        reasons.append(f"{CONFIG_FILE} does not fix num_tasks, so completeness cannot be checked")
    for name, value in config.sampling.model_dump().items():
        if isinstance(value, float) and not math.isfinite(value):
            reasons.append(f"{CONFIG_FILE} has sampling {name}={value!r}, not a number a server accepts")
    return reasons


_CLOCK_SKEW_S = 86_400.0
"""How far a run's start may lie in the future of the machine adding it (clocks differ)."""
_START_SLACK_S = 3_600.0
"""How much earlier than the config's start a rollout may start (shards on other machines)."""


def _check_dates(config: RunConfig, first_start: float | None, now: float) -> list[str]:
    """The run's start date orders builds of one version (the later one is current) and is shown
    on the pages: it must be a real date, not in the future, and not after the rollouts began."""
    created = config.created_at
    if not math.isfinite(created) or created < 0 or created > now + _CLOCK_SKEW_S:
        return [f"{CONFIG_FILE} says the run started at {created!r}, which is not a past date"]
    if first_start is not None and first_start < created - _START_SLACK_S:
        return [
            f"{CONFIG_FILE} says the run started at {created:.0f}, after its first rollout did "
            f"({first_start:.0f}): the config was edited after the run"
        ]
    return []


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _keys(keys: list[tuple[str, int]]) -> str:
    shown = ", ".join(f"{t}#{i}" for t, i in sorted(keys)[:_MAX_LISTED])
    return shown + (", ..." if len(keys) > _MAX_LISTED else "")


def _by_task(data: dict[str, Any]) -> dict[str, Any]:
    data["per_task"] = {t["task_id"]: t for t in data["per_task"]}
    return data


def _compare_summaries(
    recorded: Summary, recomputed: Summary, *, rel_tol: float, abs_tol: float
) -> list[str]:
    """Differences, field by field. Fields absent from ``summary.json`` (written by an older
    verihub, before the field existed) are not compared; every field it has must match."""
    rec = _by_task(recorded.model_dump(mode="json", exclude_unset=True))
    new = _by_task(recomputed.model_dump(mode="json"))
    new = {k: v for k, v in new.items() if k in rec}
    for tid, row in rec["per_task"].items():
        if tid in new["per_task"]:
            new["per_task"][tid] = {k: v for k, v in new["per_task"][tid].items() if k in row}
    diffs: list[str] = []
    _diff(rec, new, "", diffs, rel_tol=rel_tol, abs_tol=abs_tol)
    if not diffs:
        return []
    shown = "; ".join(diffs[:_MAX_LISTED]) + ("; ..." if len(diffs) > _MAX_LISTED else "")
    return [f"{SUMMARY_FILE} does not match the rollouts ({len(diffs)} differences: {shown})"]


def _diff(a: Any, b: Any, where: str, out: list[str], *, rel_tol: float, abs_tol: float) -> None:
    """Append ``where: recorded X, recomputed Y`` for each difference of two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                out.append(f"{sub}: recorded {a.get(key)!r}, recomputed {b.get(key)!r}")
            else:
                _diff(a[key], b[key], sub, out, rel_tol=rel_tol, abs_tol=abs_tol)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", out, rel_tol=rel_tol, abs_tol=abs_tol)
        return
    numbers = (int, float)
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        if math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol):
            return
    elif a == b:
        return
    out.append(f"{where}: recorded {a!r}, recomputed {b!r}")
