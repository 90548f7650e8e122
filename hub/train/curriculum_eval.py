"""``verihub eval ENV --curriculum``: an evaluation whose tasks a curriculum chooses batch by batch.

Each batch draws ``batch_size`` tasks from the :class:`~hub.train.curriculum.Curriculum`, runs
them (``rollouts`` each) into one run directory as ``verihub eval`` does, then teaches the
curriculum each task's group of rewards. Besides ``config.json``, ``rollouts.jsonl`` and
``summary.json`` the run directory holds ``curriculum.jsonl`` (one line per batch: the points
drawn, the pass rate, the share of groups with mixed outcomes, the level after the batch) and
``curriculum.json`` (the rules, the moves and the final state, which
:meth:`Curriculum.load_state_dict` reads). Such a run cannot be resumed: its tasks depend on
its outcomes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hub.env import POINT_KEY, Environment, Rollout, Sampling, Task, UsageError
from hub.registry import package_hash
from hub.run import (
    EvalOptions,
    RunConfig,
    RunDir,
    Runner,
    Summary,
    SummaryBuilder,
    open_client,
    open_environment,
)
from hub.train.curriculum import Curriculum, CurriculumConfig, require_difficulty

__all__ = ["BatchRecord", "CurriculumRun", "evaluate_curriculum"]


@dataclass(frozen=True)
class BatchRecord:
    """One batch of a curriculum run (a line of ``curriculum.jsonl``)."""

    batch: int
    tasks: int
    points: dict[str, int]
    """Tasks drawn per point label."""
    rollouts: int
    graded: int
    pass_rate: float | None
    mean_reward: float | None
    mixed_share: float | None
    """Share of the batch's groups whose rewards vary (the GRPO signal)."""
    level: str
    """The curriculum's point after learning from this batch."""


@dataclass
class CurriculumRun:
    """What :func:`evaluate_curriculum` returns."""

    summary: Summary | None = None
    """The run's summary after the last batch."""
    batches: list[BatchRecord] = field(default_factory=list)
    curriculum: Curriculum | None = None


async def evaluate_curriculum(
    env_id: str,
    *,
    model: str,
    out: str | os.PathLike[str],
    num_tasks: int,
    batch_size: int = 8,
    rollouts: int = 4,
    base_url: str | None = None,
    seed: int = 0,
    split: str = "train",
    sampling: Sampling | None = None,
    env_args: Mapping[str, Any] | None = None,
    config: CurriculumConfig | None = None,
    options: EvalOptions | None = None,
    on_batch: Callable[[BatchRecord], None] | None = None,
) -> CurriculumRun:
    """Run ``num_tasks`` tasks of ``env_id`` in batches of ``batch_size``, chosen by a curriculum."""
    from hub.version import __version__

    opts = options or EvalOptions()
    if opts.sandbox:
        raise UsageError("--curriculum runs the environment in this process; drop --sandbox")
    if num_tasks < 1 or batch_size < 1 or rollouts < 1:
        raise UsageError("--curriculum needs --num-tasks, --batch-size and --rollouts of at least 1")
    args = dict(env_args or {})
    env = open_environment(env_id, args)
    try:
        require_difficulty(env)
        if split not in env.splits:
            raise UsageError(f"{env_id} has no split {split!r}; it has: {', '.join(env.splits)}")
        run_config = RunConfig(
            env_id=env_id,
            env_version=env.version,
            env_hash=package_hash(env_id),
            env_args=args,
            model=model,
            base_url=None if model.startswith("local:") else base_url,
            sampling=sampling or Sampling(),
            seed=seed,
            split=split,
            num_tasks=num_tasks,
            rollouts_per_task=rollouts,
            max_turns=env.max_turns,
            verihub_version=__version__,
        )
        rundir = RunDir(out)
        rundir.ensure_new()
        curriculum = Curriculum(env.difficulty_space(), config or CurriculumConfig(), seed=seed)
        async with open_client(model, base_url, opts) as client:
            with rundir.writing("eval --curriculum"):
                rundir.create(run_config)
                return await _batches(env, client, run_config, rundir, curriculum, batch_size, opts, on_batch)
    finally:
        await env.aclose()


async def _batches(
    env: Environment,
    client: Any,
    config: RunConfig,
    rundir: RunDir,
    curriculum: Curriculum,
    batch_size: int,
    opts: EvalOptions,
    on_batch: Callable[[BatchRecord], None] | None,
) -> CurriculumRun:
    seen: dict[str, list[Rollout]] = {}

    def collect(rollout: Rollout, builder: SummaryBuilder) -> None:
        seen.setdefault(rollout.task_id, []).append(rollout)
        if opts.on_rollout is not None:
            opts.on_rollout(rollout, builder)

    result = CurriculumRun(curriculum=curriculum)
    tasks: list[Task] = []
    total = config.num_tasks or 0
    log = Path(rundir.path) / "curriculum.jsonl"
    for batch in range(-(-total // batch_size)):
        drawn = curriculum.next_tasks(
            env, min(batch_size, total - len(tasks)), split=config.split, seed=config.seed
        )
        tasks.extend(drawn)
        runner = Runner(
            env=env,
            client=client,
            config=config,
            rundir=rundir,
            concurrency=opts.concurrency,
            grade_timeout_s=opts.grade_timeout_s,
            on_rollout=collect,
            on_start=opts.on_start if batch == 0 else None,
        )
        result.summary = await runner.run(tasks)
        record = _learn(curriculum, batch, drawn, seen)
        result.batches.append(record)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(asdict(record)) + "\n")
        if on_batch is not None:
            on_batch(record)
    state = {
        "rules": asdict(curriculum.config),
        "ladder": curriculum.ladder,
        "level": curriculum.level,
        "moves": [asdict(m) for m in curriculum.moves],
        "state": curriculum.state_dict(),
    }
    (Path(rundir.path) / "curriculum.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    return result


def _learn(
    curriculum: Curriculum, batch: int, drawn: list[Task], seen: dict[str, list[Rollout]]
) -> BatchRecord:
    points: dict[str, int] = {}
    rewards: list[float] = []
    passed = graded = groups = mixed = ran = 0
    for task in drawn:
        point = task.metadata[POINT_KEY]
        label = curriculum.space.label(point)
        points[label] = points.get(label, 0) + 1
        group = seen.pop(task.id, [])
        values = [r.reward for r in group]
        signal = curriculum.observe(point, values)
        groups += 1
        ran += len(group)
        mixed += 1 if signal else 0
        for r in group:
            if r.reward is not None:
                graded += 1
                rewards.append(r.reward)
                passed += 1 if r.passed else 0
    return BatchRecord(
        batch=batch,
        tasks=len(drawn),
        points=points,
        rollouts=ran,
        graded=graded,
        pass_rate=passed / graded if graded else None,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        mixed_share=mixed / groups if groups else None,
        level=curriculum.level,
    )
