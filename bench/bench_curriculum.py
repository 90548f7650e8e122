"""The curriculum's signal: the embedded model on textops, curriculum vs fixed levels, side by side.

Each arm evaluates ``--tasks`` train tasks with ``--rollouts`` sampled rollouts each (a GRPO
group per task) and reports the share of groups with mixed outcomes (some rollouts pass, some
fail: the only groups a policy-gradient update learns from), the mean reward, and the level
(reached, for the curriculum arms). Fixed arms run ``verihub eval textops --env-arg
difficulty=L``; curriculum arms run ``verihub eval textops --curriculum`` in batches of
``--batch-size``: one from level 1 with the default band (``verihub calibrate``'s), one from
level 3 (``difficulty=3``) with ``--band`` (default 0.1-0.7: with the default floor of 1/64 a
level nobody passes is left only after 243 failures). All arms draw the same tasks of a level
in the same order (``tasks_at`` is the level's own stream).

    python bench/bench_curriculum.py --tasks 20 --rollouts 4 --batch-size 4 --max-tokens 48
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from hub.env.types import Sampling
from hub.run.evaluate import EvalOptions, evaluate
from hub.run.rundir import RunDir
from hub.train.curriculum import CurriculumConfig, has_signal
from hub.train.curriculum_eval import evaluate_curriculum

MODEL = "local:smollm2"


def groups_of(run: Path) -> list[list[float]]:
    by_task: dict[str, list[float]] = {}
    for r in RunDir(run).iter_rollouts():
        if r.reward is not None:
            by_task.setdefault(r.task_id, []).append(r.reward)
    return list(by_task.values())


def row(name: str, groups: list[list[float]], level: str, seconds: float) -> dict[str, Any]:
    rewards = [x for g in groups for x in g]
    return {
        "arm": name,
        "groups": len(groups),
        "mixed_share": sum(1 for g in groups if has_signal(g)) / len(groups) if groups else None,
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "level": level,
        "seconds": round(seconds, 1),
    }


async def fixed(level: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    await evaluate(
        "textops",
        model=MODEL,
        out=out,
        num_tasks=args.tasks,
        rollouts=args.rollouts,
        seed=args.seed,
        split="train",
        sampling=Sampling(max_tokens=args.max_tokens),
        env_args={"difficulty": level},
        options=EvalOptions(concurrency=4),
    )
    return row(f"fixed level {level}", groups_of(out), f"level={level}", time.perf_counter() - t0)


async def curriculum(
    start: int, band: tuple[float, float], args: argparse.Namespace, out: Path
) -> dict[str, Any]:
    t0 = time.perf_counter()
    run = await evaluate_curriculum(
        "textops",
        model=MODEL,
        out=out,
        num_tasks=args.tasks,
        batch_size=args.batch_size,
        rollouts=args.rollouts,
        seed=args.seed,
        split="train",
        sampling=Sampling(max_tokens=args.max_tokens),
        env_args={"difficulty": start},
        config=CurriculumConfig(band=band),
        options=EvalOptions(concurrency=4),
    )
    assert run.curriculum is not None
    levels = " ".join(b.level.removeprefix("level=") for b in run.batches)
    name = f"curriculum from {start}, band {band[0]:.3g}-{band[1]:.3g}"
    result = row(
        name, groups_of(out), f"{run.curriculum.level} (per batch: {levels})", time.perf_counter() - t0
    )
    result["points"] = {k: sum(b.points.get(k, 0) for b in run.batches) for k in run.curriculum.ladder}
    return result


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for level in (1, 2, 3):
            if f"fixed{level}" in args.arms:
                rows.append(await fixed(level, args, base / f"fixed{level}"))
                print(json.dumps(rows[-1]), flush=True)
        for start, band in [(1, CurriculumConfig().band), (3, args.band)]:
            if f"curriculum{start}" in args.arms:
                rows.append(await curriculum(start, band, args, base / f"cur{start}"))
                print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| arm | groups | mixed groups | mean reward | level (reached) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        mixed = "-" if r["mixed_share"] is None else f"{r['mixed_share']:.2f}"
        mean = "-" if r["mean_reward"] is None else f"{r['mean_reward']:.3f}"
        lines.append(f"| {r['arm']} | {r['groups']} | {mixed} | {mean} | {r['level']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24, help="Tasks (groups) per arm.")
    parser.add_argument("--rollouts", type=int, default=4, help="Rollouts per task (the group size).")
    parser.add_argument("--batch-size", type=int, default=4, help="Curriculum: tasks per batch.")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--arms",
        nargs="*",
        default=["fixed1", "fixed2", "fixed3", "curriculum1", "curriculum3"],
        help="Which arms to run (default: all five).",
    )
    parser.add_argument(
        "--band",
        type=lambda s: tuple(float(x) for x in s.split(",")),
        default=(0.1, 0.7),
        help="The band of the arm that starts at level 3 (the arm from level 1 uses the default band).",
    )
    result = asyncio.run(main(parser.parse_args()))
    print(table(result))
