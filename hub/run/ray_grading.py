"""Grading on Ray: :class:`RayGradedEnv` wraps an installed environment so that its ``grade`` runs
in Ray workers (each worker loads the environment once); everything else stays in-process.
The runner option ``EvalOptions(grade_on="ray", ray_address=...)`` (``verihub eval --grade-on ray``)
uses it for a run, and for every shard of :func:`hub.run.sharded.evaluate_sharded`; re-grade a
run on Ray with :func:`regrade_on_ray`. Ray (tested with ray 2.60.0) is imported only when used.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

from graders.grade import Grade
from hub.env import (
    Environment,
    Message,
    Rollout,
    RunDirError,
    State,
    Step,
    Task,
    UsageError,
    grade_rollout,
    with_grade,
    with_metrics,
)
from hub.registry import load_environment
from hub.run.metrics import Summary
from hub.run.regrade import finish_regrade
from hub.run.rundir import RunConfig, RunDir

__all__ = ["check_ray_reachable", "RayGradedEnv", "await_ref", "init_ray", "regrade_on_ray"]


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
        self._ray, self._started_ray = init_ray(address)
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

    def metrics(self, task: Task, rollout: Rollout) -> Mapping[str, tuple[float, float]]:
        return self.inner.metrics(task, rollout)

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        if self._remote is None:
            self._remote = self._ray.remote(num_cpus=self._num_cpus, max_retries=0)(_grade_entry)
        ref = self._remote.remote(self.id, self._args, task.model_dump_json(), rollout.model_dump_json())
        grade_json, pid = await await_ref(ref)
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
    """Like :func:`hub.run.evaluate.regrade`, with the grades computed concurrently on Ray workers."""
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
    tasks = {t.id: t for t in config.task_selection(env)}
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
        return with_metrics(env, tasks[r.task_id], with_grade(base, grade, grade_s))

    new = await asyncio.gather(*(one(r) for r in old))
    return finish_regrade(rundir, config, env.version, list(tasks), old, list(new))


# -- Ray helpers -------------------------------------------------------------------------------
def init_ray(address: str | None) -> tuple[Any, bool]:
    """The ray module, initialised (returns whether this call started Ray).

    ``ray.init`` waits minutes for a cluster that does not answer, so the cluster it would join
    (``address``, ``RAY_ADDRESS``, or the local cluster file a ``ray start`` left) is probed
    first: an unreachable one fails within :data:`RAY_PROBE_S` with what to do.
    """
    try:
        import ray
    except ImportError as exc:
        raise UsageError("the Ray backend needs Ray: `pip install ray` (tested with ray 2.60.0)") from exc
    if ray.is_initialized():
        return ray, False
    check_ray_reachable(address)
    ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    return ray, True


RAY_PROBE_S = 5.0
"""Seconds to wait for a TCP answer from a Ray cluster's address before giving up."""


def check_ray_reachable(address: str | None) -> None:
    """Raise :class:`UsageError` when the Ray cluster ``ray.init(address)`` would join does not
    answer; nothing to check when Ray would start a new local cluster."""
    import ray._private.utils as ray_utils

    env = os.environ.get("RAY_ADDRESS") or None
    target = env or address
    source = "RAY_ADDRESS" if env else "--ray-address"
    if target in (None, "auto"):
        found = ray_utils.read_ray_address()
        if not found:
            return  # no cluster file: Ray starts a local cluster
        target = found
        source = f"the Ray cluster file {ray_utils.get_ray_address_file(None)}"  # type: ignore[attr-defined]
    if target == "local":
        return
    hostport = target.removeprefix("ray://").rsplit("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"{source} {target!r} is not HOST:PORT (e.g. 10.0.0.5:6379 or ray://10.0.0.5:10001)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_PROBE_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if source.startswith("the Ray cluster file"):
            raise UsageError(
                f"{source} names {target}, where no Ray cluster answers ({reason}): a cluster that "
                "stopped without `ray stop`. Run `ray stop` (or delete the file) to start a local one, "
                "or pass --ray-address ADDR"
            ) from exc
        raise UsageError(
            f"no Ray cluster answers at {target} ({source}: {reason} within {RAY_PROBE_S:g}s); "
            "check the address and that the cluster is up (`ray status`), or drop --ray-address "
            "to start a local cluster"
        ) from exc


async def await_ref(ref: Any) -> Any:
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
