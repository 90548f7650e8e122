"""The eval card of one environment version: plain data, built from verified runs.

An :class:`EvalCard` holds one :class:`ModelResult` per model row (identical runs merged, as in
rankings): mean reward with its 95% interval (bootstrap over tasks), pass@k, pass^k, errors by
kind with the infrastructure-error flag, tokens, cost where priced, the sampling settings in full
("server default" where unset), and the per-task difficulty: the pass-rate histogram with its
0% and 100% tasks, and the learnable band counted by the one definition ``verihub calibrate``
uses (:func:`hub.review.in_band`). Each row carries its :class:`hub.review.Calibration`, the
document ``verihub calibrate`` writes as ``calibration.json``; :func:`band_export` turns it into
``learnable.jsonl`` given the environment's tasks.

Rendering is :func:`leaderboard.card_html.render_card`; the hub server and the static site both
call it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from hub.env import Task
from hub.review import LEARNABLE_BAND, Calibration, calibration_from_summary, check_band, learnable_rows
from hub.run import Summary
from leaderboard.board import Board
from leaderboard.difficulty import HistogramBin, difficulty_bins
from leaderboard.entry import BoardEntry
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD, infra_check
from leaderboard.ranking import merge_identical, row_names
from leaderboard.settings import sampling_items, settings_label

__all__ = ["EvalCard", "ModelResult", "band_export", "board_card", "eval_card"]


class ModelResult(BaseModel):
    """One row of the card: a model's run (or identical runs) on this version."""

    name: str = Field(description="What the row is called: the run's label, else the model name.")
    model: str
    label: str | None
    owner: str | None
    entry_ids: list[str] = Field(description="The runs this row stands for (identical runs merged).")
    env_hash: str
    settings: str = Field(description="Split, arguments, tasks x rollouts and sampling, as one line.")
    sampling: list[tuple[str, str]] = Field(
        description="Every sampling field; unset: server default. The seed is the run's own (each "
        "rollout's sampling seed is derived from it) unless the sampling set one."
    )
    split: str = ""
    env_args: dict[str, Any] = Field(
        default_factory=dict, description="Arguments the environment was loaded with."
    )
    n_tasks: int
    rollouts_per_task: int
    n_rollouts: int
    mean_reward: float | None
    ci95: tuple[float, float] | None = Field(description="95% bootstrap interval, resampling tasks.")
    pass_at_k: dict[str, float]
    pass_all_k: dict[str, float]
    n_errors: int
    errors_by_kind: dict[str, int]
    grader_failures: int = Field(default=0, description="Rollouts the grader raised on (scored 0).")
    infra_error_share: float
    infra_flagged: bool
    infra_note: str
    usage: dict[str, int]
    cost_usd: float | None
    cost_basis: str | None
    task_pass_rates: list[tuple[str, float]] = Field(description="(task id, pass rate), graded tasks.")
    histogram: list[HistogramBin]
    zero_tasks: list[str] = Field(description="Tasks no rollout passed.")
    full_tasks: list[str] = Field(description="Tasks every graded rollout passed.")
    learnable_tasks: list[str] = Field(description="Tasks in the learnable band.")
    ungraded_tasks: list[str] = Field(description="Tasks whose every rollout errored.")
    calibration: Calibration


class EvalCard(BaseModel):
    """Everything the card page of ``env_id`` ``env_version`` shows."""

    env_id: str
    env_version: str
    env_hashes: list[str] = Field(description="Content hashes the runs were made with (one, normally).")
    band: tuple[float, float]
    infra_threshold: float
    models: list[ModelResult] = Field(description="Best mean reward first; runs without a score last.")

    @property
    def all_zero(self) -> bool:
        """Every row scored 0 (or has no score)."""
        return all((m.mean_reward or 0.0) <= 0.0 for m in self.models)


def _result(
    name: str,
    group: Sequence[BoardEntry],
    summary: Summary,
    *,
    band: tuple[float, float],
    infra_threshold: float,
) -> ModelResult:
    e = group[0]
    rates = [(t.task_id, t.pass_rate) for t in summary.per_task if t.pass_rate is not None]
    infra = infra_check(e, threshold=infra_threshold)
    calibration = calibration_from_summary(summary, band=band)
    return ModelResult(
        name=name,
        model=e.model,
        label=e.label,
        owner=e.owner,
        entry_ids=[x.id for x in group],
        env_hash=e.env_hash,
        settings=settings_label(e),
        sampling=sampling_items(e.sampling, run_seed=sorted({g.seed for g in group})),
        split=e.split,
        env_args=dict(e.env_args or {}),
        n_tasks=e.n_tasks,
        rollouts_per_task=e.rollouts_per_task,
        n_rollouts=e.n_rollouts,
        mean_reward=e.mean_reward,
        ci95=e.ci95,
        pass_at_k=e.pass_at_k,
        pass_all_k=e.pass_all_k,
        n_errors=e.n_errors,
        errors_by_kind=dict(summary.errors_by_kind),
        grader_failures=summary.grader_failures,
        infra_error_share=infra.share,
        infra_flagged=infra.flagged,
        infra_note=infra.describe(),
        usage=e.usage,
        cost_usd=e.cost_usd,
        cost_basis=e.cost_basis,
        task_pass_rates=rates,
        histogram=difficulty_bins(p for _, p in rates),
        zero_tasks=[tid for tid, p in rates if p <= 0.0],
        full_tasks=[tid for tid, p in rates if p >= 1.0],
        learnable_tasks=list(calibration.learnable),
        ungraded_tasks=[t.task_id for t in summary.per_task if t.pass_rate is None],
        calibration=calibration,
    )


def eval_card(
    runs: Iterable[tuple[BoardEntry, Summary]],
    *,
    env_id: str,
    env_version: str,
    band: tuple[float, float] = LEARNABLE_BAND,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
) -> EvalCard:
    """The card of ``env_id`` ``env_version`` from verified runs (entry and its verified summary);
    runs of other environments or versions are left out. Identical runs become one row."""
    check_band(band)
    pairs = [(e, s) for e, s in runs if e.env_id == env_id and e.env_version == env_version]
    summaries = {e.id: s for e, s in pairs}
    groups = merge_identical(e for e, _ in pairs)
    groups.sort(key=lambda g: (g[0].mean_reward is None, -(g[0].mean_reward or 0.0), g[0].model, g[0].id))
    mixed = len({settings_label(g[0]) for g in groups}) > 1
    names = row_names(groups, mixed=mixed)
    models = [
        _result(name, g, summaries[g[0].id], band=band, infra_threshold=infra_threshold)
        for name, g in zip(names, groups, strict=True)
    ]
    return EvalCard(
        env_id=env_id,
        env_version=env_version,
        env_hashes=sorted({e.env_hash for e, _ in pairs}),
        band=band,
        infra_threshold=infra_threshold,
        models=models,
    )


def board_card(
    board: Board,
    env_id: str,
    env_version: str,
    *,
    band: tuple[float, float] = LEARNABLE_BAND,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
    entries: Sequence[BoardEntry] | None = None,
) -> EvalCard:
    """:func:`eval_card` of a board's runs (its sound entries unless ``entries`` are given)."""
    chosen = board.require_sound_entries() if entries is None else entries
    runs = [(e, board.load_summary(e)) for e in chosen if e.env_id == env_id and e.env_version == env_version]
    return eval_card(runs, env_id=env_id, env_version=env_version, band=band, infra_threshold=infra_threshold)


def band_export(result: ModelResult, tasks: Sequence[Task]) -> str:
    """``learnable.jsonl`` of this row, exactly as ``verihub calibrate`` writes it: one JSON row per
    learnable task found in ``tasks`` (the environment version's tasks)."""
    return "".join(json.dumps(row) + "\n" for row in learnable_rows(result.calibration, tasks))
