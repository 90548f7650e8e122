"""The run directory: ``config.json``, ``rollouts.jsonl`` (append-only) and ``summary.json``.

Crash safety: each finished rollout is written as one JSON line with a single ``write`` and
flushed, so a ``kill -9`` loses at most the line being written. On resume a torn last line is
cut off, finished rollouts are kept, and only the missing (task, rollout_index) pairs run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import PydanticSerializationError

from hub.env.errors import RunDirError
from hub.env.types import Rollout, Sampling, scrub_surrogates
from hub.run.metrics import Summary

__all__ = ["CONFIG_FILE", "ROLLOUTS_FILE", "SUMMARY_FILE", "RunConfig", "RunDir"]

CONFIG_FILE = "config.json"
ROLLOUTS_FILE = "rollouts.jsonl"
SUMMARY_FILE = "summary.json"


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
    rollouts_per_task: int = Field(ge=1)
    max_turns: int = Field(ge=1)
    group_advantages: bool = Field(
        default=False, description="Write each rollout's group-relative advantage (GRPO style)."
    )
    verihub_version: str
    created_at: float = Field(default_factory=time.time)

    def identity(self) -> dict[str, Any]:
        """The fields a resumed run must share with the original."""
        return self.model_dump(mode="json", exclude={"created_at"})


class RunDir:
    """One run's directory on disk."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

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
                f"cannot create the run directory {self.path} ({_os_reason(exc)}); choose another --out"
            ) from exc

    def replace_config(self, config: RunConfig) -> None:
        """Rewrite ``config.json`` of an existing run (for settings a resume may change)."""
        try:
            _atomic_write(self.config_path, config.model_dump_json(indent=2))
        except OSError as exc:
            raise RunDirError(f"cannot update {self.config_path} ({_os_reason(exc)})") from exc

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
        diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if diff:
            raise RunDirError(
                f"cannot resume {self.path}: the run differs in {', '.join(diff)}; "
                "start a new run with another --out instead"
            )

    # -- rollouts ------------------------------------------------------------------------------
    def repair(self) -> int:
        """Cut a torn final line left by a crash. Returns the number of bytes removed."""
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

    def iter_rollouts(self) -> Iterator[Rollout]:
        """Saved rollouts, in file order; a malformed line is an error that names the line."""
        if not self.rollouts_path.exists():
            return
        with self.rollouts_path.open("rb") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield Rollout.model_validate_json(line)
                except ValidationError as exc:
                    raise RunDirError(
                        f"{self.rollouts_path}:{lineno} is not a valid rollout record "
                        f"({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
                    ) from exc

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
        try:
            return RolloutWriter(self.rollouts_path)
        except OSError as exc:
            raise RunDirError(f"cannot write {self.rollouts_path} ({_os_reason(exc)})") from exc

    # -- summary -------------------------------------------------------------------------------
    def write_summary(self, summary: Summary) -> None:
        try:
            _atomic_write(self.summary_path, summary.model_dump_json(indent=2))
        except OSError as exc:
            raise RunDirError(
                f"cannot write {self.summary_path} ({_os_reason(exc)}); the rollouts are saved: "
                f"free space, then `verihub eval --resume {self.path}` writes the summary"
            ) from exc

    def load_summary(self) -> Summary:
        if not self.summary_path.exists():
            raise RunDirError(f"{self.path} has no {SUMMARY_FILE}; the run has not finished (resume it)")
        try:
            return Summary.model_validate_json(self.summary_path.read_bytes())
        except ValidationError as exc:
            raise RunDirError(f"{self.summary_path} is not a valid summary") from exc


class RolloutWriter:
    """Appends rollouts as JSON lines, one ``write`` + flush per rollout."""

    def __init__(self, path: Path) -> None:
        self._fh: IO[bytes] = path.open("ab", buffering=0)

    def write(self, rollout: Rollout) -> None:
        self._fh.write(_rollout_line(rollout))

    def write_many(self, rollouts: list[Rollout]) -> None:
        """Write several rollouts with one ``write`` (a group lands together or not at all)."""
        self._fh.write(b"".join(_rollout_line(r) for r in rollouts))

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RolloutWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rollout_line(rollout: Rollout) -> bytes:
    """One JSON line. Text with lone surrogates (from a model, tool or grader: ``"\\ud800"`` is
    valid JSON but not encodable UTF-8) is saved with U+FFFD in their place rather than lost."""
    try:
        return rollout.model_dump_json().encode() + b"\n"
    except (PydanticSerializationError, UnicodeEncodeError):
        clean = Rollout.model_validate(_scrub(rollout.model_dump(mode="python")))
        return clean.model_dump_json().encode() + b"\n"


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_surrogates(value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v) for v in value)
    return value


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
