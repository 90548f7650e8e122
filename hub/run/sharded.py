"""Evaluation shards on Ray (or locally), merged into one run directory.

Evaluation shards::

    summary = await evaluate_sharded("arith", model="m", base_url=url, out="runs/a",
                                     num_tasks=1000, rollouts=8, shards=16, backend="ray")

The selected tasks are dealt round-robin to ``shards`` shards; each shard runs as one Ray task
(one CPU) that writes its own run directory ``out/shards/shard-NNN`` with the normal runner
(streaming, retries, grading timeouts). When all shards finish, their rollouts are merged into
``out/rollouts.jsonl`` (each (task, rollout_index) once, in task order) and ``out/summary.json``
is recomputed over every task. A shard directory that already holds rollouts is resumed, so
running the same command again after a failure only runs what is missing. ``backend="local"``
runs the shards as coroutines in this process (the same code path, without Ray).
The shards grade on Ray workers with ``EvalOptions(grade_on="ray")`` (see :mod:`hub.run.ray_grading`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from hub.env import Rollout, RunDirError, Sampling, UsageError
from hub.registry import load_environment
from hub.run.evaluate import EvalOptions, grading_env, open_client, prepare_run, run_tasks
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.ray_grading import await_ref, init_ray
from hub.run.rundir import RunConfig, RunDir

__all__ = ["Backend", "evaluate_sharded", "merge_shards"]

Backend = Literal["ray", "local"]
SHARDS_DIR = "shards"


async def evaluate_sharded(
    env_id: str,
    *,
    model: str,
    out: str | os.PathLike[str],
    base_url: str | None = None,
    shards: int = 2,
    backend: Backend = "ray",
    ray_address: str | None = None,
    num_tasks: int | None = None,
    rollouts: int = 1,
    max_turns: int | None = None,
    seed: int = 0,
    split: str = "test",
    sampling: Sampling | None = None,
    env_args: Mapping[str, Any] | None = None,
    group_advantages: bool = False,
    options: EvalOptions | None = None,
) -> Summary:
    """Evaluate ``env_id`` in ``shards`` shards (Ray tasks) and merge them into ``out``.

    Every shard must reach ``base_url`` (or start its own ``local:`` model). Returns the merged
    summary. ``options`` apply per shard (concurrency is per shard); progress callbacks are not
    sent to Ray workers. With ``options.grade_on == "ray"`` every shard grades on Ray workers
    (the shards then reserve no CPU: they wait on the model and on their grading tasks).
    ``ray_address`` is where Ray is started (for the shards and the grading), unless Ray is
    already initialised.
    """
    if shards < 1:
        raise UsageError("--shards must be at least 1")
    if backend not in ("ray", "local"):
        raise UsageError(f"unknown backend {backend!r}; use ray or local")
    opts = dataclasses.replace(options or EvalOptions(), on_rollout=None, on_start=None)
    if opts.grade_on not in ("ray", "local"):
        raise UsageError(f"--grade-on must be local or ray, not {opts.grade_on!r}")
    address = ray_address if ray_address is not None else opts.ray_address
    # the shards find Ray running (started below); a shard on a Ray worker is connected already
    opts = dataclasses.replace(opts, ray_address=None)
    _, selection, config = prepare_run(
        env_id,
        model=model,
        base_url=base_url,
        num_tasks=num_tasks,
        rollouts=rollouts,
        max_turns=max_turns,
        seed=seed,
        split=split,
        sampling=sampling,
        env_args=env_args,
        group_advantages=group_advantages,
    )
    task_ids = [t.id for t in selection]  # shards need the ids; the tasks themselves are not kept
    root = RunDir(out)
    if root.config_path.exists():
        root.check_resumable(config)  # the same command again: resume the shards
    else:
        root.create(config)
    n = min(shards, len(task_ids))
    specs = [(str(Path(out) / SHARDS_DIR / f"shard-{i:03d}"), task_ids[i::n], config, opts) for i in range(n)]
    ray: Any = None
    started = False
    if backend == "ray" or opts.grade_on == "ray":
        ray, started = init_ray(address)
    try:
        if backend == "ray":
            # A shard awaits its grading tasks without ray.get, so Ray would not lend its CPU to
            # them: with grading on Ray, shards reserve none (or N shards on N CPUs deadlock).
            cpus = 0 if opts.grade_on == "ray" else 1
            remote = ray.remote(num_cpus=cpus, max_retries=0)(_shard_entry)
            refs = [remote.remote(*spec) for spec in specs]
            await asyncio.gather(*(await_ref(ref) for ref in refs))
        else:
            await asyncio.gather(*(_run_shard(*spec) for spec in specs))
    finally:
        if started:
            ray.shutdown()
    return merge_shards(out, [s[0] for s in specs], task_ids=task_ids)


def merge_shards(
    out: str | os.PathLike[str], shard_dirs: Iterable[str | os.PathLike[str]], *, task_ids: list[str]
) -> Summary:
    """Merge shard run directories into ``out`` (whose config.json must exist): each
    (task, rollout_index) once, in task order, and a summary recomputed over ``task_ids``."""
    root = RunDir(out)
    config = root.load_config()
    with root.writing("merge"):
        return _merge(root, config, shard_dirs, task_ids)


def _merge(
    root: RunDir, config: RunConfig, shard_dirs: Iterable[str | os.PathLike[str]], task_ids: list[str]
) -> Summary:
    out = root.path
    by_key: dict[tuple[str, int], Rollout] = {}
    for d in shard_dirs:
        shard = RunDir(d)  # read only: a torn last line is skipped, never cut
        if shard.load_config().identity() != config.identity():
            raise RunDirError(f"shard {d} was run with another configuration than {out}; start a new run")
        for r in shard.iter_rollouts():
            key = (r.task_id, r.rollout_index)
            if key in by_key:
                raise RunDirError(f"{key} appears in two shards of {out}; the shard folders were edited")
            by_key[key] = r
    position = {tid: i for i, tid in enumerate(task_ids)}
    foreign = sorted({tid for tid, _ in by_key} - set(position))
    if foreign:
        raise RunDirError(f"shards of {out} hold task {foreign[0]!r}, which this run does not select")
    ordered = sorted(by_key.values(), key=lambda r: (position[r.task_id], r.rollout_index))
    root.replace_rollouts(ordered, reason="merge", keep=False)  # the shards hold the records
    builder = SummaryBuilder(
        env_id=config.env_id,
        env_version=config.env_version,
        model=config.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for tid in task_ids:
        builder.add_task(tid)
    summary = builder.extend(ordered).build()
    root.write_summary(summary)
    return summary


def _shard_entry(path: str, task_ids: list[str], config: RunConfig, opts: EvalOptions) -> str:
    """Body of one Ray task (a separate process): run the shard on a fresh event loop."""
    from hub.env import aio

    return aio.run(_run_shard(path, task_ids, config, opts))


async def _run_shard(path: str, task_ids: list[str], config: RunConfig, opts: EvalOptions) -> str:
    env = load_environment(config.env_id, **config.env_args)
    mine = set(task_ids)
    tasks = [t for t in config.task_selection(env) if t.id in mine]
    if len(tasks) != len(mine):
        raise RunDirError(f"shard {path}: the environment no longer has all of its tasks; start a new run")
    rundir = RunDir(path)
    if rundir.config_path.exists():
        rundir.check_resumable(config)
    else:
        rundir.create(config)
    try:
        env = grading_env(env, config, opts)
        async with open_client(config.model, config.base_url, opts) as client:
            await run_tasks(env, client, config, rundir, tasks, opts)
    finally:
        await env.aclose()
    return path
