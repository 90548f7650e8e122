"""Difficulty calibration: per-task pass rates, and the learnable band exported for RL.

``verihub calibrate ID --model M --rollouts 16`` evaluates every selected task R times and reports
each task's pass rate (Wilson 95% interval), a histogram, the unsolved tasks (flagged possibly
infeasible when the reference itself fails) and the saturated ones, then exports the learnable
tasks as ``learnable.jsonl`` and a ``datasets`` dataset in the chat format of
:func:`hub.train.rewards.to_dataset`, ready for a GRPO trainer.

:func:`in_band` is the one definition of the learnable band, shared with the eval cards: some
rollout passed (``p >= 1/64``) and it is not mostly solved (``p <= 0.7``), both inclusive; a task
no rollout passed is never in it. Calibration reads the ``train`` split by default; the test
split only when asked, with a warning (tasks trained on must not be evaluated on).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hub.env import Task, UsageError
from hub.run import Summary

__all__ = [
    "LEARNABLE_BAND",
    "TEST_SPLIT_WARNING",
    "Calibration",
    "TaskCalibration",
    "calibrate",
    "calibration_from_summary",
    "check_band",
    "export_learnable",
    "histogram_text",
    "in_band",
    "learnable_rows",
    "wilson_interval",
]

LEARNABLE_BAND: tuple[float, float] = (1 / 64, 0.7)
"""The default learnable band ``(low, high)``: at least one pass in 64, at most 70% passed."""


def in_band(pass_rate: float | None, band: tuple[float, float] = LEARNABLE_BAND) -> bool:
    """Is a task with this pass rate learnable? ``low <= p <= high`` and ``p > 0`` (a task that
    no rollout passed gives RL no signal); None (no graded rollout) is never learnable."""
    low, high = band
    return pass_rate is not None and pass_rate > 0.0 and low <= pass_rate <= high


def check_band(band: tuple[float, float]) -> None:
    """Raise ValueError unless ``0 <= low < high <= 1``."""
    low, high = band
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"band must satisfy 0 <= low < high <= 1, got {band}")


TEST_SPLIT_WARNING = (
    "warning: calibrating on the test split; the learnable tasks it exports come from the test set, "
    "so a model trained on them must not be evaluated on that split (use --split train)"
)


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (well-behaved at 0 and n)."""
    if n <= 0:
        return (0.0, 1.0)
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


class TaskCalibration(BaseModel):
    task_id: str
    n: int = Field(description="Graded rollouts (errors excluded).")
    n_passed: int
    n_errors: int = 0
    pass_rate: float | None
    ci95: tuple[float, float]
    gold_passes: bool | None = Field(default=None, description="For 0% tasks: does the reference pass?")


class Calibration(BaseModel):
    """Contents of ``calibration.json``."""

    env_id: str
    model: str
    rollouts_per_task: int
    band: tuple[float, float] = Field(
        description="Learnable band: low <= pass rate <= high, at least one pass (see in_band)."
    )
    saturated_at: float
    tasks: list[TaskCalibration]
    histogram: list[tuple[float, float, int]] = Field(description="(low, high, count) per bin of pass rate.")
    zero: list[str] = Field(description="Tasks with pass rate 0.")
    possibly_infeasible: list[str] = Field(description="0% tasks whose reference answer does not pass.")
    saturated: list[str] = Field(description="Tasks with pass rate >= saturated_at.")
    learnable: list[str] = Field(description="Tasks inside the band.")


def calibration_from_summary(
    summary: Summary,
    *,
    band: tuple[float, float] = LEARNABLE_BAND,
    saturated_at: float = 0.9,
    bins: int = 10,
    gold: Mapping[str, bool | None] | None = None,
) -> Calibration:
    """Classify the tasks of a finished run by pass rate."""
    check_band(band)
    low, high = band
    gold = gold or {}
    rows: list[TaskCalibration] = []
    for t in summary.per_task:
        rows.append(
            TaskCalibration(
                task_id=t.task_id,
                n=t.n,
                n_passed=t.n_passed,
                n_errors=t.n_errors,
                pass_rate=t.pass_rate,
                ci95=wilson_interval(t.n_passed, t.n),
                gold_passes=gold.get(t.task_id),
            )
        )
    counts = [0] * bins
    for r in rows:
        if r.pass_rate is not None:
            counts[min(bins - 1, int(r.pass_rate * bins))] += 1
    zero = [r.task_id for r in rows if r.pass_rate == 0.0]
    return Calibration(
        env_id=summary.env_id,
        model=summary.model,
        rollouts_per_task=summary.rollouts_per_task,
        band=(low, high),
        saturated_at=saturated_at,
        tasks=rows,
        histogram=[(i / bins, (i + 1) / bins, c) for i, c in enumerate(counts)],
        zero=zero,
        possibly_infeasible=[r.task_id for r in rows if r.task_id in zero and r.gold_passes is not True],
        saturated=[r.task_id for r in rows if r.pass_rate is not None and r.pass_rate >= saturated_at],
        learnable=[r.task_id for r in rows if in_band(r.pass_rate, band)],
    )


def histogram_text(cal: Calibration, width: int = 40) -> str:
    """The histogram as text bars."""
    top = max((c for _, _, c in cal.histogram), default=0) or 1
    lines = []
    for lo, hi, c in cal.histogram:
        closing = "]" if hi >= 1.0 else ")"
        lines.append(f"[{lo:.1f}, {hi:.1f}{closing} {'#' * round(width * c / top):<{width}} {c}")
    return "\n".join(lines)


def _row(task: Task, cal: TaskCalibration, env_id: str, system_prompt: str | None) -> dict[str, Any]:
    return {
        "env_id": env_id,
        "task_id": task.id,
        "prompt": [{"role": m.role, "content": m.content or ""} for m in task.messages(system_prompt)],
        "answer": json.dumps(task.answer),
        "metadata": json.dumps(task.metadata, default=str),
        "pass_rate": cal.pass_rate,
        "ci_low": cal.ci95[0],
        "ci_high": cal.ci95[1],
        "n": cal.n,
    }


def learnable_rows(
    cal: Calibration, tasks: Sequence[Task], *, system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """The rows of ``learnable.jsonl``: one per learnable task found in ``tasks``, in band order."""
    by_id = {t.id: t for t in tasks}
    stats = {t.task_id: t for t in cal.tasks}
    return [_row(by_id[i], stats[i], cal.env_id, system_prompt) for i in cal.learnable if i in by_id]


def export_learnable(
    cal: Calibration, tasks: Sequence[Task], out: Path, *, system_prompt: str | None = None
) -> tuple[Path, Path]:
    """Write ``learnable.jsonl`` and ``learnable_dataset/`` (``datasets.save_to_disk``) into ``out``.

    ``prompt`` is the opening chat messages (``system_prompt`` first when given), as
    :func:`hub.train.rewards.to_dataset` writes them; ``answer`` and ``metadata`` are JSON strings
    so that every row has the same column types.
    """
    import datasets

    rows = learnable_rows(cal, tasks, system_prompt=system_prompt)
    out.mkdir(parents=True, exist_ok=True)
    jsonl = out / "learnable.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    ds_dir = out / "learnable_dataset"
    columns = ["env_id", "task_id", "prompt", "answer", "metadata", "pass_rate", "ci_low", "ci_high", "n"]
    message = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    features = datasets.Features(
        {
            **{c: datasets.Value("string") for c in ("env_id", "task_id", "answer", "metadata")},
            "prompt": [message],
            **{c: datasets.Value("float64") for c in columns[5:8]},
            "n": datasets.Value("int64"),
        }
    )
    datasets.Dataset.from_dict({c: [r[c] for r in rows] for c in columns}, features=features).save_to_disk(
        str(ds_dir)
    )
    return jsonl, ds_dir


async def _gold_passes(
    env_id: str, env_args: Mapping[str, Any], tasks: Sequence[Task]
) -> dict[str, bool | None]:
    from hub.env import Message, Rollout, Timing, grade_rollout
    from hub.registry import load_environment
    from hub.review.check.probes import gold_response

    env = load_environment(env_id, **env_args)
    out: dict[str, bool | None] = {}
    for task in tasks:
        gold = gold_response(env, task)
        if gold is None:
            out[task.id] = None
            continue
        rollout = Rollout(
            task_id=task.id,
            rollout_index=0,
            messages=[*task.messages(env.system_prompt), Message(role="assistant", content=gold)],
            completion=gold,
            timing=Timing(started_at=0.0),
        )
        grade = await grade_rollout(env, task, rollout, timeout_s=30.0)
        out[task.id] = None if grade.is_error else grade.passed
    return out


async def calibrate(
    env_id: str,
    *,
    model: str,
    out: str | os.PathLike[str],
    rollouts: int = 16,
    num_tasks: int | None = None,
    band: tuple[float, float] = LEARNABLE_BAND,
    saturated_at: float = 0.9,
    base_url: str | None = None,
    split: str = "train",
    seed: int = 0,
    env_args: Mapping[str, Any] | None = None,
    **eval_kwargs: Any,
) -> Calibration:
    """Run ``rollouts`` per task into ``out/run``, then classify and export (see the module doc).

    ``split``: ``train`` by default; an environment without one needs ``split="test"`` said
    explicitly. ``eval_kwargs`` go to :func:`hub.run.evaluate.evaluate` (``sampling``,
    ``options``, ``max_turns``).
    """
    from hub.env import select_tasks
    from hub.registry import load_environment
    from hub.run.evaluate import evaluate

    root = Path(out)
    args = dict(env_args or {})
    splits = load_environment(env_id, **args).splits
    if split not in splits:
        hint = " (calibrating on test picks training tasks from the test set)" if split == "train" else ""
        raise UsageError(
            f"{env_id} has no {split!r} split; it has {', '.join(splits)}: pass --split NAME{hint}"
        )
    summary = await evaluate(
        env_id,
        model=model,
        out=root / "run",
        base_url=base_url,
        num_tasks=num_tasks,
        rollouts=rollouts,
        seed=seed,
        split=split,
        env_args=args,
        **eval_kwargs,
    )
    env = load_environment(env_id, **args)
    tasks = select_tasks(env, split=split, seed=seed, num_tasks=num_tasks)
    zero_ids = {t.task_id for t in summary.per_task if t.pass_rate == 0.0}
    gold = await _gold_passes(env_id, args, [t for t in tasks if t.id in zero_ids])
    cal = calibration_from_summary(summary, band=band, saturated_at=saturated_at, gold=gold)
    export_learnable(cal, tasks, root, system_prompt=env.system_prompt)
    (root / "calibration.json").write_text(cal.model_dump_json(indent=2), encoding="utf-8")
    return cal
