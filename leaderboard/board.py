"""A board: a folder of verified run summaries plus an index.

Layout::

    BOARD/
      index.json                 BoardIndex: one BoardEntry per accepted run
      runs/<entry id>/
        config.json              byte copies of the run's files (hashes recorded in the index)
        summary.json
        rollouts.jsonl           only with ``copy_rollouts=True``; otherwise the entry points to
                                 the original run directory

Only runs that pass :func:`leaderboard.verify.verify_run` enter. The index records each file's
sha256, so :meth:`Board.check` notices a board edited after the fact.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hub.env import UsageError
from hub.run import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunConfig, Summary
from leaderboard.stats import DEFAULT_RESAMPLES, bootstrap_ci
from leaderboard.verify import VerifiedRun, file_sha256, verify_run

__all__ = ["INDEX_FILE", "Board", "BoardEntry", "BoardError", "BoardIndex", "TokenPrices"]

INDEX_FILE = "index.json"
_INDEX_VERSION = 1


class BoardError(UsageError):
    """The board folder is missing, malformed, or was edited after runs were added."""


class BoardEntry(BaseModel):
    """One accepted run, with everything the pages show about where its numbers came from."""

    id: str = Field(
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$",
        max_length=200,
        description="Stable entry id; also the folder name under runs/ and the run page's name.",
    )
    env_id: str
    env_version: str
    env_hash: str = Field(description="Content hash of the environment package at run time.")
    env_args: dict[str, Any] | None = Field(
        default=None, description="Arguments the environment was loaded with (None: entry predates it)."
    )
    location_args: list[str] = Field(
        default_factory=list, description="env_args that only locate a local copy of the data (e.g. path)."
    )
    data_sha256: str | None = Field(
        default=None, description="Hash of the rows of the run's data, wherever they came from (None: none)."
    )
    model: str
    base_url: str | None = None
    sampling: dict[str, Any] = Field(description="Sampling settings of the run.")
    seed: int
    split: str
    verihub_version: str
    created_at: float = Field(description="Unix time the run started.")
    added_at: float = Field(description="Unix time the run entered the board.")
    n_tasks: int
    rollouts_per_task: int
    n_rollouts: int
    n_errors: int
    mean_reward: float | None
    ci95: tuple[float, float] | None = Field(description="Bootstrap 95% interval over tasks.")
    bootstrap_seed: int
    bootstrap_resamples: int
    pass_at_k: dict[str, float]
    pass_all_k: dict[str, float]
    usage: dict[str, int]
    cost_usd: float | None = Field(
        default=None,
        description="Total cost: recorded by every rollout, or from token usage at given prices.",
    )
    cost_basis: str | None = Field(
        default=None, description="Where cost_usd comes from: 'rollouts' or the per-token prices used."
    )
    source: str = Field(description="Run directory the entry was added from.")
    rollouts_copied: bool
    tasks_checked: bool = Field(
        default=False, description="The task ids were re-derived from the installed environment."
    )
    sha256: dict[str, str] = Field(description="Hash of config.json, summary.json, rollouts.jsonl.")
    content_sha256: str | None = Field(
        default=None,
        description="Hash of the run's content whatever its formatting (config identity and the set "
        "of rollouts); one run re-serialised is still one entry. None for entries added before.",
    )


class BoardIndex(BaseModel):
    """Contents of ``index.json``."""

    format_version: int = _INDEX_VERSION
    entries: list[BoardEntry] = Field(default_factory=list)


class Board:
    """A leaderboard folder. ``Board(path).add(run_dir)`` verifies a run and files it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @property
    def index_path(self) -> Path:
        return self.path / INDEX_FILE

    def entry_dir(self, entry: BoardEntry) -> Path:
        return self.path / "runs" / entry.id

    # -- reading -------------------------------------------------------------------------------
    def load_index(self) -> BoardIndex:
        """The index; an empty one when the board does not exist yet."""
        if not self.index_path.exists():
            if self.path.exists() and any(self.path.iterdir()):
                raise BoardError(
                    f"{self.path} is not a leaderboard (no {INDEX_FILE}); choose another --board"
                )
            return BoardIndex()
        try:
            index = BoardIndex.model_validate_json(self.index_path.read_bytes())
        except ValidationError as exc:
            raise BoardError(
                f"{self.index_path} is not a valid board index; restore it or start a new board"
            ) from exc
        if index.format_version != _INDEX_VERSION:
            raise BoardError(
                f"{self.index_path} has format {index.format_version}; this verihub reads {_INDEX_VERSION}"
            )
        return index

    def entries(self) -> list[BoardEntry]:
        return self.load_index().entries

    def require_entries(self) -> list[BoardEntry]:
        """The entries, or an error saying how to add some."""
        entries = self.entries()
        if not entries:
            raise BoardError(
                f"no runs on the board {self.path}; add some with `verihub leaderboard add RUN_DIR`"
            )
        return entries

    def require_sound_entries(self) -> list[BoardEntry]:
        """The entries, refusing a board whose stored files or index changed after ``add``
        (:meth:`check`): what a table or a page shows must be what was verified."""
        entries = self.require_entries()
        problems = self.check()
        if problems:
            raise BoardError(
                f"the board {self.path} was modified after runs were added: "
                + "; ".join(problems[:5])
                + ". Remove the affected entries from index.json and add the runs again"
            )
        return entries

    def load_summary(self, entry: BoardEntry) -> Summary:
        return Summary.model_validate_json((self.entry_dir(entry) / SUMMARY_FILE).read_bytes())

    def load_config(self, entry: BoardEntry) -> RunConfig:
        return RunConfig.model_validate_json((self.entry_dir(entry) / CONFIG_FILE).read_bytes())

    def rollouts_path(self, entry: BoardEntry) -> Path | None:
        """Where the entry's rollouts are, if they are still there unchanged; else None."""
        path = (
            self.entry_dir(entry) / ROLLOUTS_FILE
            if entry.rollouts_copied
            else Path(entry.source) / ROLLOUTS_FILE
        )
        if path.is_file() and file_sha256(path) == entry.sha256.get(ROLLOUTS_FILE):
            return path
        return None

    def check(self) -> list[str]:
        """Problems with the board; [] when sound: stored copies edited or removed after ``add``,
        an entry listed twice, or an entry whose numbers in ``index.json`` (what the pages show)
        are not those of its stored config.json and summary.json."""
        problems: list[str] = []
        entries = self.entries()
        seen_ids: set[str] = set()
        seen_runs: dict[tuple[str | None, str | None], str] = {}
        for entry in entries:
            if entry.id in seen_ids:
                problems.append(f"{entry.id}: listed more than once in {INDEX_FILE}")
            seen_ids.add(entry.id)
            run_key = (entry.sha256.get(CONFIG_FILE), entry.sha256.get(ROLLOUTS_FILE))
            if run_key in seen_runs and seen_runs[run_key] != entry.id:
                problems.append(f"{entry.id}: the same run as {seen_runs[run_key]} (counted twice)")
            seen_runs.setdefault(run_key, entry.id)
            if entry.content_sha256 is not None:
                content_key = (entry.content_sha256, None)
                if content_key in seen_runs and seen_runs[content_key] != entry.id:
                    problems.append(f"{entry.id}: the same run as {seen_runs[content_key]} (counted twice)")
                seen_runs.setdefault(content_key, entry.id)
            names = [CONFIG_FILE, SUMMARY_FILE] + ([ROLLOUTS_FILE] if entry.rollouts_copied else [])
            sound = True
            for name in names:
                path = self.entry_dir(entry) / name
                if not path.is_file():
                    problems.append(f"{entry.id}: {name} is missing from the board")
                    sound = False
                elif file_sha256(path) != entry.sha256.get(name):
                    problems.append(f"{entry.id}: {name} was changed after the run was added")
                    sound = False
            if sound:
                try:
                    config, summary = self.load_config(entry), self.load_summary(entry)
                except ValidationError:
                    problems.append(f"{entry.id}: its stored config.json or summary.json does not parse")
                    continue
                problems += [f"{entry.id}: {p}" for p in _index_disagreements(entry, config, summary)]
        return problems

    # -- writing -------------------------------------------------------------------------------
    def add(
        self,
        run_dir: str | os.PathLike[str],
        *,
        copy_rollouts: bool = False,
        check_tasks: bool = False,
        bootstrap_seed: int = 0,
        prices: TokenPrices | None = None,
    ) -> tuple[BoardEntry, bool]:
        """Verify ``run_dir`` and add it. Returns (entry, added); ``added`` is False when the very
        same run (same config and rollouts files) is already on the board. Raises ``RunRejected``.

        ``copy_rollouts`` keeps the transcripts on the board; ``check_tasks`` also re-derives the
        task set from the installed environment (see :func:`leaderboard.verify.verify_run`);
        ``prices`` give the cost from the run's token usage when its rollouts record none.
        """
        verified = verify_run(run_dir, check_tasks=check_tasks)
        index = self.load_index()
        for entry in index.entries:
            if entry.sha256.get(ROLLOUTS_FILE) == verified.sha256[ROLLOUTS_FILE] and (
                entry.sha256.get(CONFIG_FILE) == verified.sha256[CONFIG_FILE]
            ):
                return entry, False
            if entry.content_sha256 is not None and entry.content_sha256 == verified.content_sha256:
                return entry, False  # the same run, re-serialised: counting it twice would double it
        entry = _entry(verified, copy_rollouts=copy_rollouts, bootstrap_seed=bootstrap_seed, prices=prices)
        if any(e.id == entry.id for e in index.entries):
            raise BoardError(
                f"{self.path} already has an entry {entry.id} for different files; check index.json"
            )
        dest = self.entry_dir(entry)
        dest.mkdir(parents=True, exist_ok=True)
        names = [CONFIG_FILE, SUMMARY_FILE] + ([ROLLOUTS_FILE] if copy_rollouts else [])
        for name in names:
            shutil.copyfile(verified.path / name, dest / name)
        for name in names:  # the copy must be what was verified
            if file_sha256(dest / name) != verified.sha256[name]:
                shutil.rmtree(dest)
                raise BoardError(f"{verified.path / name} changed while it was being added; add it again")
        index.entries.append(entry)
        self._write_index(index)
        return entry, True

    def _write_index(self, index: BoardIndex) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.index_path.with_suffix(".json.tmp")
        tmp.write_text(index.model_dump_json(indent=2), encoding="utf-8")
        os.replace(tmp, self.index_path)


_MAX_RESAMPLES = 100_000


def _close(a: float | None, b: float | None, tol: float = 1e-7) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def _close_map(a: dict[str, float], b: dict[str, float]) -> bool:
    return set(a) == set(b) and all(_close(a[k], b[k]) for k in a)


def _index_disagreements(entry: BoardEntry, config: RunConfig, summary: Summary) -> list[str]:
    """Fields of ``entry`` (written into index.json by :meth:`Board.add`) that its stored, hash-checked
    config and summary do not support: an index.json edited by hand shows none of its numbers."""
    out: list[str] = []
    claimed = {
        "env_id": (entry.env_id, config.env_id),
        "env_version": (entry.env_version, config.env_version),
        "env_hash": (entry.env_hash, config.env_hash),
        "env_args": (entry.env_args or {}, json.loads(json.dumps(config.env_args))),
        "model": (entry.model, config.model),
        "base_url": (entry.base_url, config.base_url),
        "sampling": (entry.sampling, json.loads(config.sampling.model_dump_json())),
        "seed": (entry.seed, config.seed),
        "split": (entry.split, config.split),
        "verihub_version": (entry.verihub_version, config.verihub_version),
        "created_at": (entry.created_at, config.created_at),
        "n_tasks": (entry.n_tasks, summary.n_tasks),
        "rollouts_per_task": (entry.rollouts_per_task, summary.rollouts_per_task),
        "n_rollouts": (entry.n_rollouts, summary.n_rollouts),
        "n_errors": (entry.n_errors, summary.n_errors),
    }
    if "usage" in summary.model_fields_set:
        claimed["usage"] = (entry.usage, summary.usage)
    out += [f"index.json says {k} {a!r}, its files say {b!r}" for k, (a, b) in claimed.items() if a != b]
    if not _close(entry.mean_reward, summary.mean_reward):
        out.append(f"index.json says mean_reward {entry.mean_reward!r}, its summary {summary.mean_reward!r}")
    for name in ("pass_at_k", "pass_all_k"):
        if not _close_map(getattr(entry, name), getattr(summary, name)):
            out.append(f"index.json's {name} is not its summary's")
    if not 1 <= entry.bootstrap_resamples <= _MAX_RESAMPLES:
        out.append(f"index.json says {entry.bootstrap_resamples} bootstrap resamples")
        return out
    graded = [t for t in summary.per_task if t.n > 0]
    if all(t.mean_reward is not None for t in graded):
        ci = bootstrap_ci(
            [t.mean_reward for t in graded if t.mean_reward is not None],
            weights=[t.n for t in graded],
            seed=entry.bootstrap_seed,
            resamples=entry.bootstrap_resamples,
        )
        if (ci is None) != (entry.ci95 is None) or (
            ci is not None and entry.ci95 is not None and not all(map(_close, ci, entry.ci95))
        ):
            out.append(f"index.json says ci95 {entry.ci95!r}, its summary gives {ci!r}")
    return out


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:limit] or "x"


@dataclass(frozen=True)
class TokenPrices:
    """What a model's tokens cost, in US dollars per million tokens."""

    prompt_usd_per_mtok: float
    completion_usd_per_mtok: float

    def __post_init__(self) -> None:
        prices = (self.prompt_usd_per_mtok, self.completion_usd_per_mtok)
        if not all(math.isfinite(p) and p >= 0 for p in prices):
            raise ValueError("token prices must be finite and not negative")

    def cost(self, usage: dict[str, int]) -> float:
        """Cost of a usage record (``prompt_tokens``, ``completion_tokens``)."""
        return (
            usage.get("prompt_tokens", 0) * self.prompt_usd_per_mtok
            + usage.get("completion_tokens", 0) * self.completion_usd_per_mtok
        ) / 1e6

    def describe(self) -> str:
        return (
            f"${self.prompt_usd_per_mtok:g}/M prompt + ${self.completion_usd_per_mtok:g}/M completion tokens"
        )


def _cost(v: VerifiedRun, prices: TokenPrices | None) -> tuple[float | None, str | None]:
    if v.cost_usd is not None:
        return v.cost_usd, "rollouts"
    if prices is not None:
        return prices.cost(v.summary.usage), prices.describe()
    return None, None


def _data_sha256(config: RunConfig) -> str | None:
    """One hash for the rows of every dataset the run loaded (None when it loaded none)."""
    hashes = [str(d.get("rows_sha256")) for d in config.data if d.get("rows_sha256")]
    if not hashes:
        return None
    return "sha256:" + hashlib.sha256("\n".join(hashes).encode()).hexdigest()


def _entry(
    v: VerifiedRun, *, copy_rollouts: bool, bootstrap_seed: int, prices: TokenPrices | None = None
) -> BoardEntry:
    c, s = v.config, v.summary
    cost_usd, cost_basis = _cost(v, prices)
    # config and rollouts together: two models with identical rollouts are still two runs
    digest = hashlib.sha256((v.sha256[CONFIG_FILE] + v.sha256[ROLLOUTS_FILE]).encode()).hexdigest()[:10]
    return BoardEntry(
        id=f"{_slug(c.env_id)}-{_slug(c.env_version, 16)}-{_slug(c.model)}-{digest}",
        env_id=c.env_id,
        env_version=c.env_version,
        env_hash=c.env_hash,
        env_args=json.loads(json.dumps(c.env_args)),
        location_args=list(c.location_args),
        data_sha256=_data_sha256(c),
        model=c.model,
        base_url=c.base_url,
        sampling=c.sampling.model_dump(mode="json"),
        seed=c.seed,
        split=c.split,
        verihub_version=c.verihub_version,
        created_at=c.created_at,
        added_at=time.time(),
        n_tasks=s.n_tasks,
        rollouts_per_task=s.rollouts_per_task,
        n_rollouts=s.n_rollouts,
        n_errors=s.n_errors,
        mean_reward=s.mean_reward,
        ci95=bootstrap_ci(v.task_means, weights=v.task_weights, seed=bootstrap_seed),
        bootstrap_seed=bootstrap_seed,
        bootstrap_resamples=DEFAULT_RESAMPLES,
        pass_at_k=s.pass_at_k,
        pass_all_k=s.pass_all_k,
        usage=s.usage,
        cost_usd=cost_usd,
        cost_basis=cost_basis,
        source=str(v.path.resolve()),
        rollouts_copied=copy_rollouts,
        tasks_checked=v.tasks_checked,
        sha256=v.sha256,
        content_sha256=v.content_sha256 or None,
    )
