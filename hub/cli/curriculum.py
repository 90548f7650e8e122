"""``verihub eval ENV --curriculum`` (the run itself is :mod:`hub.train.curriculum_eval`) and the
difficulty rows of ``verihub info --difficulty``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hub.env import Sampling, UsageError, VerihubError, aio
from hub.run import EvalOptions

__all__ = ["difficulty_rows", "eval_curriculum", "parse_band"]

console = Console(highlight=False)


def parse_band(text: str | None) -> tuple[float, float] | None:
    """``LOW,HIGH`` (e.g. ``0.1,0.7``) as a band, None for the default."""
    if text is None:
        return None
    low, sep, high = text.partition(",")
    try:
        band = (float(low), float(high))
    except ValueError:
        band = (-1.0, -1.0)
    if not sep or not 0.0 <= band[0] < band[1] <= 1.0:
        raise UsageError(f"--band {text!r} must be LOW,HIGH with 0 <= LOW < HIGH <= 1, e.g. 0.1,0.7")
    return band


def eval_curriculum(
    env_id: str,
    *,
    model: str,
    base_url: str | None,
    out: Path,
    num_tasks: int | None,
    batch_size: int,
    band: str | None,
    rollouts: int,
    seed: int,
    split: str,
    sampling: Sampling,
    env_args: dict[str, Any],
    options: EvalOptions,
) -> None:
    """Run a curriculum evaluation, printing each batch as it ends and the trajectory at the end."""
    from hub.train import BatchRecord, CurriculumConfig, evaluate_curriculum

    if num_tasks is None:
        raise UsageError("--curriculum needs --num-tasks N (the tasks to draw, in batches of --batch-size)")
    parsed = parse_band(band)
    config = CurriculumConfig() if parsed is None else CurriculumConfig(band=parsed)

    def show(b: BatchRecord) -> None:
        rate = "-" if b.pass_rate is None else f"{b.pass_rate:.2f}"
        mixed = "-" if b.mixed_share is None else f"{b.mixed_share:.2f}"
        drawn = " ".join(f"{k}:{v}" for k, v in sorted(b.points.items()))
        console.print(f"batch {b.batch}: {drawn}  pass rate {rate}  mixed groups {mixed}  -> {b.level}")

    run = aio.run(
        evaluate_curriculum(
            env_id,
            model=model,
            out=out,
            num_tasks=num_tasks,
            batch_size=batch_size,
            rollouts=rollouts,
            base_url=base_url,
            seed=seed,
            split=split,
            sampling=sampling,
            env_args=env_args,
            config=config,
            options=options,
            on_batch=show,
        )
    )
    table = Table(title=f"{env_id} curriculum @ {model}")
    for col in ("batch", "tasks", "pass rate", "mean reward", "mixed groups", "level after"):
        table.add_column(col)
    for b in run.batches:
        table.add_row(
            str(b.batch),
            str(b.tasks),
            "-" if b.pass_rate is None else f"{b.pass_rate:.3f}",
            "-" if b.mean_reward is None else f"{b.mean_reward:.3f}",
            "-" if b.mixed_share is None else f"{b.mixed_share:.2f}",
            b.level,
        )
    console.print(table)
    console.print(f"trajectory and state: {out / 'curriculum.jsonl'}, {out / 'curriculum.json'}")


def difficulty_rows(env_id: str) -> dict[str, str]:
    """The difficulty space of installed ``env_id`` as info rows (loads the environment)."""
    from hub.registry import load_environment

    try:
        space = load_environment(env_id).difficulty_space()
    except VerihubError as exc:
        return {"difficulty": f"unknown: the environment does not load here ({exc})"}
    if not space.axes:
        return {"difficulty": "none declared (one point)"}
    rows = {}
    for row in space.describe():
        levels = ", ".join(str(v) for v in row["levels"])  # type: ignore[attr-defined]
        rows[f"difficulty {row['axis']}"] = f"levels {levels}; start {row['start']}. {row['description']}"
    rows["difficulty ladder"] = " < ".join(space.label(p) for p in space.ladder())
    return rows
