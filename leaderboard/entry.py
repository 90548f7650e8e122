"""One accepted run as the board records it (:class:`BoardEntry`), and how it is made from a
verified run (:func:`entry_from_run`), with its cost (:class:`TokenPrices`).

The entry holds the numbers the pages show (recomputed from the rollouts when the run was added),
its provenance, and two things a person adds: a ``label`` and an ``owner``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from hub.run import CONFIG_FILE, ROLLOUTS_FILE, RunConfig
from leaderboard.stats import DEFAULT_RESAMPLES, bootstrap_ci
from leaderboard.verify import VerifiedRun

__all__ = ["BoardEntry", "TokenPrices", "clean_label", "entry_from_run"]


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
    errors_by_kind: dict[str, int] = Field(
        default_factory=dict,
        description="Errored rollouts by kind (model, environment, grader), from the verified summary.",
    )
    label: str | None = Field(
        default=None, max_length=120, description="A human label shown instead of the model name."
    )
    owner: str | None = Field(default=None, max_length=120, description="Who added or pushed the run.")
    origin: str | None = Field(
        default=None,
        max_length=8,
        description="'hub' when a hub ran the run itself against a named endpoint; None when its "
        "owner ran it (a pushed or locally added run).",
    )
    content_sha256: str | None = Field(
        default=None,
        description="Hash of the run's content whatever its formatting (config identity and the set "
        "of rollouts); one run re-serialised is still one entry. None for entries added before.",
    )


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


def entry_from_run(
    v: VerifiedRun,
    *,
    copy_rollouts: bool = False,
    bootstrap_seed: int = 0,
    prices: TokenPrices | None = None,
    label: str | None = None,
    owner: str | None = None,
) -> BoardEntry:
    """The board entry of a verified run (what :meth:`leaderboard.Board.add` stores; the hub server
    builds its entries with it too). ``label`` is a human name shown instead of the model's."""
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
        errors_by_kind=dict(s.errors_by_kind),
        label=clean_label(label),
        owner=owner,
        content_sha256=v.content_sha256 or None,
    )


def clean_label(label: str | None) -> str | None:
    """A label as stored: one line, outer spaces trimmed, None when blank."""
    if label is None:
        return None
    text = " ".join(label.split())
    return text or None
