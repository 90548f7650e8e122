"""The run directory: ``config.json``, ``rollouts.jsonl`` (append-only) and ``summary.json``.

Crash safety: each finished rollout is written as one JSON line with a single ``write`` and
flushed, so a ``kill -9`` loses at most the line being written. On resume a torn last line is
cut off, finished rollouts are kept, and only the missing (task, rollout_index) pairs run.

Integrity rules:

- one writer at a time: every writer holds the directory's lock (:mod:`hub.run.runlock`);
- readers never write: :meth:`RunDir.iter_rollouts` skips a last line without its newline (a
  record being written, or torn by a crash); only the lock holder cuts it off (:meth:`repair`);
- a failed or short append (a full disk) is cut back to the last whole record and stops the run
  with a :class:`RunDirError`; a resume continues once there is space;
- rewriting the file (``regrade``, a sharded merge) writes a new file and swaps it in atomically,
  keeping the previous one under ``regrades/<time>.jsonl``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hub.env import Environment, Rollout, RunDirError, Sampling, TaskSelection
from hub.run.metrics import Summary
from hub.run.records import RolloutWriter, os_reason, read_records, rollout_line
from hub.run.runlock import LockHolder, RunLock, holder_of

__all__ = [
    "CONFIG_FILE",
    "FAILED_FILE",
    "HISTORY_DIR",
    "RETRIED_KINDS",
    "ROLLOUTS_FILE",
    "SUMMARY_FILE",
    "RunConfig",
    "RunDir",
]

CONFIG_FILE = "config.json"
ROLLOUTS_FILE = "rollouts.jsonl"
SUMMARY_FILE = "summary.json"
HISTORY_DIR = "regrades"
FAILED_FILE = "failed_attempts.jsonl"
RETRIED_KINDS = frozenset({"model", "environment"})
"""Error kinds ``--retry-errors`` runs again (a grader error is fixed by ``regrade`` instead)."""


class RunConfig(BaseModel):
    """What defines a run. A resume must match every field except ``created_at``."""

    env_id: str
    env_version: str
    env_hash: str = Field(description="Content hash of the environment package (sha256).")
    env_args: dict[str, Any] = Field(default_factory=dict, description="Arguments to load_environment.")
    model: str
    base_url: str | None
    sampling: Sampling
    seed: int
    split: str
    num_tasks: int | None = Field(description="Tasks selected (the first N of the split).")
    shuffle: bool = Field(default=False, description="A seeded random sample of num_tasks, not the first N.")
    rollouts_per_task: int = Field(ge=1)
    max_turns: int = Field(ge=1)
    logprobs: bool = Field(
        default=False,
        description="Record each answer's tokens and log-probabilities (extra.tokens) when the "
        "server returns them.",
    )
    group_advantages: bool = Field(
        default=False, description="Write each rollout's group-relative advantage (GRPO style)."
    )
    data: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Where the environment's data came from: per dataset, the Hugging Face id, split "
        "and revision or a local copy's sha256, and rows_sha256 (see hub.registry.data).",
    )
    location_args: list[str] = Field(
        default_factory=list,
        description="env_args that only say where a local copy of the data is (e.g. path): not part "
        "of what the run measures, so they do not split a leaderboard column.",
    )
    tasks_sha256: str | None = Field(
        default=None, description="Hash of the selected tasks (None: older runs)."
    )
    verihub_version: str
    created_at: float = Field(default_factory=time.time)

    def identity(self) -> dict[str, Any]:
        """The fields a resumed run must share with the original (data provenance aside: the
        same tasks may come from another copy; ``tasks_sha256`` says whether they are the same)."""
        return self.model_dump(mode="json", exclude={"created_at", "data", "location_args"})

    def task_selection(self, env: Environment) -> TaskSelection:
        """The tasks this run selects from ``env``."""
        return TaskSelection(
            env, split=self.split, seed=self.seed, num_tasks=self.num_tasks, shuffle=self.shuffle
        )


class RunDir:
    """One run's directory on disk."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = RunLock(self.path)

    # -- the writer lock -----------------------------------------------------------------------
    def writing(self, purpose: str) -> contextlib.AbstractContextManager[None]:
        """Hold the directory's writer lock for the block (reentrant on this object); a second
        writer anywhere gets a :class:`RunDirError` naming the holder."""
        return self._lock.hold(purpose)

    @property
    def locked(self) -> bool:
        """Whether this object holds the writer lock now."""
        return self._lock.held

    def writer_holder(self) -> LockHolder | None:
        """Who is writing this run now (another process), or None."""
        return None if self._lock.held else holder_of(self.path)

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def rollouts_path(self) -> Path:
        return self.path / ROLLOUTS_FILE

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY_FILE

    # -- creation and resume -------------------------------------------------------------------
    def ensure_new(self) -> None:
        """Raise unless a new run can be created here."""
        if self.config_path.exists() or self.rollouts_path.exists():
            raise RunDirError(
                f"{self.path} already holds a run; resume it with `verihub eval --resume {self.path}` "
                "or choose another --out"
            )
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(f"{self.path} exists and is not a directory; choose another --out")
        ancestor = self.path.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if ancestor.exists() and not ancestor.is_dir():
            raise RunDirError(
                f"cannot create the run directory {self.path}: {ancestor} is a file; choose another --out"
            )

    def create(self, config: RunConfig) -> None:
        """Start a new run here; refuses to overwrite an existing run."""
        self.ensure_new()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            _atomic_write(self.config_path, config.model_dump_json(indent=2))
        except OSError as exc:
            raise RunDirError(
                f"cannot create the run directory {self.path} ({os_reason(exc)}); choose another --out"
            ) from exc

    def replace_config(self, config: RunConfig) -> None:
        """Rewrite ``config.json`` of an existing run (for settings a resume may change)."""
        try:
            _atomic_write(self.config_path, config.model_dump_json(indent=2))
        except OSError as exc:
            raise RunDirError(f"cannot update {self.config_path} ({os_reason(exc)})") from exc

    def load_config(self) -> RunConfig:
        if not self.path.is_dir():
            raise RunDirError(f"{self.path} is not a run directory (it does not exist)")
        if not self.config_path.exists():
            raise RunDirError(f"{self.path} is not a verihub run directory: no {CONFIG_FILE}")
        try:
            return RunConfig.model_validate_json(self.config_path.read_bytes())
        except ValidationError as exc:
            raise RunDirError(
                f"{self.config_path} is not a valid verihub run config ({exc.error_count()} problems, "
                f"first: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
            ) from exc

    def check_resumable(self, config: RunConfig) -> None:
        """Refuse to resume when ``config`` differs from the recorded one."""
        old = self.load_config().identity()
        new = config.identity()
        if old.get("tasks_sha256") is None:  # a run from before the task hash was recorded
            new["tasks_sha256"] = None
        diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if diff:
            raise RunDirError(
                f"cannot resume {self.path}: the run differs in {', '.join(diff)}; "
                "start a new run with another --out instead"
            )

    # -- rollouts ------------------------------------------------------------------------------
    def repair(self) -> int:
        """Cut a torn final line left by a crash. Returns the number of bytes removed.

        Takes the writer lock (a line being appended by a running writer is not torn)."""
        with self.writing("repair"):
            return self._repair()

    def _repair(self) -> int:
        if not self.rollouts_path.exists():
            return 0
        with self.rollouts_path.open("rb+") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size == 0:
                return 0
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return 0
            # find the last newline
            pos = size
            chunk = 65536
            while pos > 0:
                start = max(0, pos - chunk)
                fh.seek(start)
                data = fh.read(pos - start)
                idx = data.rfind(b"\n")
                if idx >= 0:
                    keep = start + idx + 1
                    fh.truncate(keep)
                    return size - keep
                pos = start
            fh.truncate(0)
            return size

    def drop_partial_groups(self, group_size: int) -> int:
        """In group mode a task's rollouts are written together; drop any incomplete group a
        crash left behind (they are run again). Returns the number of rollouts dropped."""
        counts: dict[str, int] = {}
        for r in self.iter_rollouts():
            counts[r.task_id] = counts.get(r.task_id, 0) + 1
        partial = {tid for tid, n in counts.items() if n < group_size}
        if not partial:
            return 0
        with self.writing("repair"):
            tmp = self.rollouts_path.with_suffix(".jsonl.tmp")
            dropped = 0
            with self.rollouts_path.open("rb") as src, tmp.open("wb") as dst:
                for line in src:
                    if line.strip() and Rollout.model_validate_json(line).task_id in partial:
                        dropped += 1
                        continue
                    dst.write(line)
            os.replace(tmp, self.rollouts_path)
        return dropped

    def replace_rollouts(self, rollouts: Iterable[Rollout], *, reason: str, keep: bool = True) -> Path | None:
        """Replace ``rollouts.jsonl`` with ``rollouts`` atomically, under the writer lock.

        The new records go to a temporary file first (a failure leaves the run as it was); the
        previous file is kept as ``regrades/<time>-<reason>.jsonl`` (with ``keep``), which is
        returned (None when nothing was kept).
        """
        with self.writing(reason):
            tmp = self.rollouts_path.with_name(ROLLOUTS_FILE + f".{reason}")
            try:
                with tmp.open("wb") as fh:
                    for r in rollouts:
                        fh.write(rollout_line(r))
                    fh.flush()
                    os.fsync(fh.fileno())
                kept: Path | None = None
                if keep and self.rollouts_path.exists():
                    history = self.path / HISTORY_DIR
                    history.mkdir(exist_ok=True)
                    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
                    kept = history / f"{stamp}-{reason}.jsonl"
                    n = 1
                    while kept.exists():
                        n += 1
                        kept = history / f"{stamp}-{reason}-{n}.jsonl"
                    os.link(self.rollouts_path, kept)  # the old records stay, at no copy cost
                os.replace(tmp, self.rollouts_path)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise RunDirError(
                    f"cannot rewrite {self.rollouts_path} ({os_reason(exc)}); the run is unchanged"
                ) from exc
            return kept

    def set_aside_errors(self) -> int:
        """Move the rollouts that ended in a model or environment error out of ``rollouts.jsonl``
        (so a resume runs them again), appending them whole to ``failed_attempts.jsonl`` for
        audit. Returns how many were moved."""
        with self.writing("retry"):
            failed = [r for r in self.iter_rollouts() if _retried(r)]
            if not failed:
                return 0
            with (self.path / FAILED_FILE).open("ab") as fh:  # first: a crash leaves them in both
                fh.write(b"".join(rollout_line(r) for r in failed))
                fh.flush()
                os.fsync(fh.fileno())
            keep = [r for r in self.iter_rollouts() if not _retried(r)]
            self.replace_rollouts(keep, reason="retry", keep=False)
            return len(failed)

    def failed_attempts(self) -> dict[tuple[str, int], list[dict[str, Any]]]:
        """Per (task_id, rollout_index): the attempts set aside by :meth:`set_aside_errors`
        (error and timing), oldest first, each once."""
        path = self.path / FAILED_FILE
        out: dict[tuple[str, int], list[dict[str, Any]]] = {}
        if not path.exists():
            return out
        seen: set[tuple[str, int, float]] = set()
        for r in read_records(path):
            mark = (r.task_id, r.rollout_index, r.timing.started_at)
            if mark in seen or r.error is None:
                continue
            seen.add(mark)
            out.setdefault((r.task_id, r.rollout_index), []).append(
                {
                    "error": r.error.model_dump(mode="json"),
                    "started_at": r.timing.started_at,
                    "total_s": r.timing.total_s,
                    "turns": r.turns,
                }
            )
        return out

    def iter_rollouts(self) -> Iterator[Rollout]:
        """Saved rollouts, in file order; a malformed line is an error that names the line.

        A last line without its newline is skipped, never cut: it is a record a running writer
        is appending, or one torn by a crash (which the next writer removes)."""
        return read_records(self.rollouts_path)

    def done_keys(self) -> set[tuple[str, int]]:
        """(task_id, rollout_index) of every saved rollout; duplicates are an error."""
        seen: set[tuple[str, int]] = set()
        for r in self.iter_rollouts():
            key = (r.task_id, r.rollout_index)
            if key in seen:
                raise RunDirError(f"{self.rollouts_path} records {key} twice; the file was edited")
            seen.add(key)
        return seen

    def open_writer(self) -> RolloutWriter:
        """The appender of new rollouts. It holds the writer lock until closed (taking it when
        this object does not hold it already)."""
        stack = contextlib.ExitStack()
        stack.enter_context(self.writing("write"))
        try:
            return RolloutWriter(self.rollouts_path, on_close=stack.close)
        except OSError as exc:
            stack.close()
            raise RunDirError(f"cannot write {self.rollouts_path} ({os_reason(exc)})") from exc

    # -- summary -------------------------------------------------------------------------------
    def write_summary(self, summary: Summary) -> None:
        try:
            _atomic_write(self.summary_path, summary.model_dump_json(indent=2))
        except OSError as exc:
            raise RunDirError(
                f"cannot write {self.summary_path} ({os_reason(exc)}); the rollouts are saved: "
                f"free space, then `verihub eval --resume {self.path}` writes the summary"
            ) from exc

    def load_summary(self) -> Summary:
        if not self.summary_path.exists():
            raise RunDirError(f"{self.path} has no {SUMMARY_FILE}; the run has not finished (resume it)")
        try:
            return Summary.model_validate_json(self.summary_path.read_bytes())
        except ValidationError as exc:
            raise RunDirError(f"{self.summary_path} is not a valid summary") from exc


def _retried(r: Rollout) -> bool:
    return r.error is not None and r.error.kind in RETRIED_KINDS


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
