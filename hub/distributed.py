"""Scale out on Ray: evaluation shards and a grading pool.

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

Grading pool: :class:`RayGradedEnv` wraps an installed environment so that its ``grade`` runs
in Ray workers (each worker loads the environment once); everything else stays in-process.
The runner option ``EvalOptions(grade_on="ray", ray_address=...)`` (``verihub eval --grade-on
ray``) uses it for a run, and for every shard of :func:`evaluate_sharded`; re-grade a run on Ray
with :func:`regrade_on_ray`. Ray (tested with ray 2.60.0) is imported only when used.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from graders.grade import Grade
from hub.environment import Environment
from hub.errors import RunDirError, UsageError
from hub.evaluate import EvalOptions, finish_regrade, grading_env, open_client, prepare_run, run_tasks
from hub.metrics import Summary, SummaryBuilder
from hub.registry import load_environment
from hub.rundir import RunConfig, RunDir
from hub.runner import grade_rollout, select_tasks, with_grade
from hub.types import Message, Rollout, Sampling, State, Step, Task

__all__ = ["Backend", "RayGradedEnv", "evaluate_sharded", "merge_shards", "regrade_on_ray"]

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
        ray, started = _ray(address)
    try:
        if backend == "ray":
            # A shard awaits its grading tasks without ray.get, so Ray would not lend its CPU to
            # them: with grading on Ray, shards reserve none (or N shards on N CPUs deadlock).
            cpus = 0 if opts.grade_on == "ray" else 1
            remote = ray.remote(num_cpus=cpus, max_retries=0)(_shard_entry)
            refs = [remote.remote(*spec) for spec in specs]
            await asyncio.gather(*(_await_ref(ref) for ref in refs))
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
        shard = RunDir(d)
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
    from hub import aio

    return aio.run(_run_shard(path, task_ids, config, opts))


async def _run_shard(path: str, task_ids: list[str], config: RunConfig, opts: EvalOptions) -> str:
    env = load_environment(config.env_id, **config.env_args)
    mine = set(task_ids)
    tasks = [
        t
        for t in select_tasks(env, split=config.split, seed=config.seed, num_tasks=config.num_tasks)
        if t.id in mine
    ]
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


# -- grading pool ------------------------------------------------------------------------------
class RayGradedEnv(Environment):
    """An installed environment whose ``grade`` runs in Ray workers (the CPU-heavy part).

    Tasks, ``reset`` and ``step`` run in this process; each ``grade`` is a Ray task that loads
    the environment once per worker process (by id and ``load_environment`` arguments) and
    grades there. A hard timeout (the runner's) cancels the Ray task.

    ``inner``: the environment already loaded here (else it is loaded by id). ``address``: the
    Ray cluster for ``ray.init`` when Ray is not initialised yet; Ray is started on
    construction (so a missing Ray fails before the run, not as grader errors), and
    :meth:`aclose` shuts it down if this object started it. :attr:`remote_grades` and
    :attr:`worker_pids` count the grades computed on Ray and the worker processes that did.
    """

    def __init__(
        self,
        env_id: str,
        *,
        env_args: Mapping[str, Any] | None = None,
        num_cpus: float = 1.0,
        inner: Environment | None = None,
        address: str | None = None,
    ) -> None:
        self._args = dict(env_args or {})
        self.inner = inner if inner is not None else load_environment(env_id, **self._args)
        self._ray, self._started_ray = _ray(address)
        self.remote_grades = 0
        self.worker_pids: set[int] = set()
        super().__init__(
            id=env_id,
            version=self.inner.version,
            system_prompt=self.inner.system_prompt,
            max_turns=self.inner.max_turns,
        )
        self._num_cpus = num_cpus
        self._remote: Any = None

    @property
    def splits(self) -> tuple[str, ...]:
        return self.inner.splits

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        return self.inner.tasks(split, seed=seed)

    def num_tasks(self, split: str = "test") -> int | None:
        return self.inner.num_tasks(split)

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        return self.inner.tool_schemas()

    async def reset(self, task: Task) -> State:
        return await self.inner.reset(task)

    async def step(self, state: State, action: Message) -> Step:
        return await self.inner.step(state, action)

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        if self._remote is None:
            self._remote = self._ray.remote(num_cpus=self._num_cpus, max_retries=0)(_grade_entry)
        ref = self._remote.remote(self.id, self._args, task.model_dump_json(), rollout.model_dump_json())
        grade_json, pid = await _await_ref(ref)
        self.remote_grades += 1
        self.worker_pids.add(pid)
        return Grade.model_validate_json(grade_json)

    async def aclose(self) -> None:
        """Close the wrapped environment, and shut Ray down if this object started it."""
        try:
            await self.inner.aclose()
        finally:
            if self._started_ray:
                self._started_ray = False
                self._ray.shutdown()


_WORKER_ENVS: dict[str, Environment] = {}
_WORKER_LOOP: list[asyncio.AbstractEventLoop] = []


def _grade_entry(env_id: str, env_args: dict[str, Any], task_json: str, rollout_json: str) -> tuple[str, int]:
    """Body of one grading Ray task: the environment is loaded once per worker process.
    Returns the grade (JSON) and the worker's process id."""
    import json

    key = env_id + json.dumps(env_args, sort_keys=True, default=str)
    env = _WORKER_ENVS.get(key)
    if env is None:
        env = _WORKER_ENVS[key] = load_environment(env_id, **env_args)
    task = Task.model_validate_json(task_json)
    rollout = Rollout.model_validate_json(rollout_json)
    if not _WORKER_LOOP:  # one loop per worker process: graders may keep loop-bound pools
        _WORKER_LOOP.append(asyncio.new_event_loop())
    grade = _WORKER_LOOP[0].run_until_complete(env.grade(task, rollout))
    return grade.model_dump_json(), os.getpid()


async def regrade_on_ray(
    out: str | os.PathLike[str],
    *,
    grade_timeout_s: float = 60.0,
    concurrency: int = 64,
    ray_address: str | None = None,
) -> tuple[Summary, int]:
    """Like :func:`hub.evaluate.regrade`, with the grades computed concurrently on Ray workers."""
    rundir = RunDir(out)
    config = rundir.load_config()
    with rundir.writing("regrade"):
        env = RayGradedEnv(config.env_id, env_args=config.env_args, address=ray_address)
        try:
            return await _regrade(
                env, rundir, config, grade_timeout_s=grade_timeout_s, concurrency=concurrency
            )
        finally:
            await env.aclose()


async def _regrade(
    env: RayGradedEnv, rundir: RunDir, config: RunConfig, *, grade_timeout_s: float, concurrency: int
) -> tuple[Summary, int]:
    out = rundir.path
    tasks = {
        t.id: t for t in select_tasks(env, split=config.split, seed=config.seed, num_tasks=config.num_tasks)
    }
    rundir.repair()
    old = list(rundir.iter_rollouts())
    missing = sorted({r.task_id for r in old} - set(tasks))
    if missing:
        raise RunDirError(f"{out}: task {missing[0]!r} is no longer in {config.env_id}; cannot regrade")
    sem = asyncio.Semaphore(concurrency)

    async def one(r: Rollout) -> Rollout:
        if r.error is not None and r.error.kind != "grader":
            return r
        base = r.model_copy(update={"error": None, "grade": None, "reward": None, "passed": False})
        async with sem:
            started = time.perf_counter()  # the grading itself, not the wait for a slot
            grade = await grade_rollout(env, tasks[r.task_id], base, timeout_s=grade_timeout_s)
            grade_s = time.perf_counter() - started
        return with_grade(base, grade, grade_s)

    new = await asyncio.gather(*(one(r) for r in old))
    return finish_regrade(rundir, config, env.version, list(tasks), old, list(new))


# -- Ray helpers -------------------------------------------------------------------------------
def _ray(address: str | None) -> tuple[Any, bool]:
    """The ray module, initialised (returns whether this call started Ray)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("the Ray backend needs Ray: `pip install ray` (tested with ray 2.60.0)") from exc
    if ray.is_initialized():
        return ray, False
    ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    return ray, True


async def _await_ref(ref: Any) -> Any:
    """Await a Ray ObjectRef without blocking the event loop; cancelling cancels the Ray task."""
    import ray

    try:
        return await asyncio.wrap_future(ref.future())
    except asyncio.CancelledError:
        ray.cancel(ref, force=True)
        raise
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        raise cause from None
