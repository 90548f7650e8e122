"""The evaluation API behind ``verihub eval``: start, resume, and regrade runs.

::

    summary = asyncio.run(evaluate("arith", model="local:smollm2", out="runs/a", num_tasks=20))
    summary = asyncio.run(resume("runs/a"))

``evaluate`` writes ``config.json`` first, then streams rollouts; ``resume`` reloads the
environment named in the config, refuses a changed configuration, and runs only what is missing.

Where grading runs is an option (:attr:`EvalOptions.grade_on`): ``"local"`` grades in this
process, ``"ray"`` sends each grade to Ray workers (:class:`hub.run.ray_grading.RayGradedEnv`).
Grades do not depend on where they are computed, so a run may be resumed with another backend.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hub.env import Environment, RunDirError, Sampling, Task, TaskSelection, UsageError, recording_sources
from hub.registry import load_environment, package_hash
from hub.run.client import ChatClient, ClientOptions, OpenAIClient
from hub.run.gold import GoldClient, is_gold_model
from hub.run.local_model import LocalModelServer, is_local_model
from hub.run.metrics import Summary
from hub.run.regrade import regrade
from hub.run.rundir import RunConfig, RunDir
from hub.run.runner import ProgressCallback, Runner, StartCallback

__all__ = [
    "GradeOn",
    "EvalOptions",
    "evaluate",
    "grading_env",
    "open_client",
    "prepare_run",
    "regrade",
    "resume",
    "run_tasks",
]

LOCAL_MAX_PARALLEL = 4

GradeOn = Literal["local", "ray"]
"""Where grading runs: ``local`` (this process) or ``ray`` (Ray workers)."""


@dataclass(frozen=True)
class EvalOptions:
    """How to run (not what to run): these may change between a run and its resume."""

    concurrency: int = 32
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = 5
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    grade_timeout_s: float = 60.0
    grade_on: GradeOn = "local"
    """``ray``: grade on Ray workers (``ray.init(address=ray_address)`` unless Ray is running)."""
    ray_address: str | None = None
    sandbox: bool = False
    """Run the environment's code in the bubblewrap sandbox (:mod:`hub.sandbox`): tasks, reset,
    step and grade become requests to it. Grades do not depend on it."""
    unsafe_no_sandbox: bool = False
    """With ``sandbox``: run the same server unsandboxed where bubblewrap is missing."""
    stream: bool = False
    """Ask the model server for streamed answers (server-sent events); the answer is the same."""
    retry_errors: bool = False
    """On resume: run again the rollouts that ended in a model or environment error."""
    on_rollout: ProgressCallback | None = field(default=None, compare=False)
    on_start: StartCallback | None = field(default=None, compare=False)


@contextlib.asynccontextmanager
async def open_client(
    model: str,
    base_url: str | None,
    options: EvalOptions,
    *,
    env: Environment | None = None,
    tasks: Iterable[Task] = (),
) -> AsyncIterator[ChatClient]:
    """A ready client for ``model``: the embedded server for ``local:NAME``, the built-in gold
    policy for ``gold`` (it needs ``env`` and ``tasks``), else ``base_url``."""
    if is_gold_model(model):
        yield GoldClient(tasks, env.system_prompt if env is not None else None)
        return
    with contextlib.ExitStack() as stack:
        if is_local_model(model):
            server = stack.enter_context(
                LocalModelServer(model, parallel=min(LOCAL_MAX_PARALLEL, max(1, options.concurrency)))
            )
            url, served_model = server.base_url, server.name
        else:
            if not base_url:
                raise UsageError(
                    f"--model {model!r} needs --base-url (an OpenAI-compatible endpoint such as "
                    "http://127.0.0.1:8000/v1), or use --model local:smollm2"
                )
            url, served_model = base_url, model
        api_key = os.environ.get(options.api_key_env) if options.api_key_env else None
        client_opts = ClientOptions(
            base_url=url,
            model=served_model,
            api_key=api_key,
            timeout_s=options.timeout_s,
            max_retries=options.max_retries,
            max_in_flight=max(1, options.concurrency),
            requests_per_minute=options.requests_per_minute,
            tokens_per_minute=options.tokens_per_minute,
            stream=options.stream,
        )
        async with OpenAIClient(client_opts) as client:
            await client.probe()
            yield client


def open_environment(
    env_id: str, env_args: Mapping[str, Any], options: EvalOptions | None = None
) -> Environment:
    """Load ``env_id`` here, or (``options.sandbox``) start it in the sandbox behind a proxy."""
    if options is None or not options.sandbox:
        return load_environment(env_id, **env_args)
    from hub.sandbox import Limits, StageError, start_installed, unavailable_reason

    reason = None if options.unsafe_no_sandbox else unavailable_reason()
    if reason is not None:
        raise UsageError(f"--sandbox: {reason}")
    try:
        week = 7 * 24 * 3600  # a run is bounded by its own limits, not the sandbox's clock
        return start_installed(
            env_id, env_args, limits=Limits(wall_s=float(week), cpu_s=week), unsafe=options.unsafe_no_sandbox
        )
    except StageError as exc:
        raise UsageError(str(exc)) from None


def _close_now(env: Environment) -> None:
    close = getattr(env, "close", None)  # a sandboxed environment: end its sandbox
    if callable(close):
        close()


class _CountingSelection(TaskSelection):
    """A task selection that counts the tasks its iterations yield, so that one pass over a
    generated split gives both its hash and its size."""

    yielded = 0

    def __iter__(self) -> Iterator[Task]:
        for task in super().__iter__():
            self.yielded += 1
            yield task


def prepare_run(
    env_id: str,
    *,
    model: str,
    base_url: str | None,
    num_tasks: int | None,
    rollouts: int,
    max_turns: int | None,
    seed: int,
    split: str,
    sampling: Sampling | None,
    env_args: Mapping[str, Any] | None,
    group_advantages: bool,
    shuffle: bool = False,
    logprobs: bool = False,
    options: EvalOptions | None = None,
    started: tuple[Environment, str] | None = None,
) -> tuple[Environment, TaskSelection, RunConfig]:
    """Load the environment, select its tasks and build the run's config (nothing is written).

    The config records where the data came from (:mod:`hub.registry.data`) and a hash of the
    selected tasks; ``env_args`` that only locate a local copy are listed as ``location_args``.
    ``started``: an environment already started elsewhere (a sandbox of a package that is not
    installed here) and its package's content hash, used instead of loading ``env_id``."""
    from hub.version import __version__

    if rollouts < 1:
        raise UsageError("--rollouts must be at least 1")
    args = dict(env_args or {})
    with recording_sources() as sources:
        env = started[0] if started is not None else open_environment(env_id, args, options)
    reported = getattr(env, "data_sources", None)  # a sandboxed package reports its own loads
    if not sources and callable(reported):
        sources = reported()
    try:
        if split not in env.splits:
            raise UsageError(f"{env_id} has no split {split!r}; it has: {', '.join(env.splits)}")
        tasks = _CountingSelection(env, split=split, seed=seed, num_tasks=num_tasks, shuffle=shuffle)
        digest = tasks.sha256()  # one pass over the tasks gives their hash and their number
        count = tasks.yielded
        if not count:
            raise UsageError(f"{env_id} has no tasks in split {split!r}")
        local = any(s.get("source") == "local" for s in sources)
        location = sorted(k for k, v in args.items() if local and isinstance(v, str) and os.path.exists(v))
        config = RunConfig(
            env_id=env_id,
            env_version=env.version,
            env_hash=started[1] if started is not None else package_hash(env_id),
            env_args=args,
            model=model,
            base_url=None if is_local_model(model) or is_gold_model(model) else base_url,
            sampling=sampling or Sampling(),
            seed=seed,
            split=split,
            num_tasks=count,
            shuffle=shuffle,
            logprobs=logprobs,
            rollouts_per_task=rollouts,
            max_turns=max_turns or env.max_turns,
            group_advantages=group_advantages,
            data=sources,
            location_args=location,
            tasks_sha256=digest,
            verihub_version=__version__,
        )
    except BaseException:
        _close_now(env)
        raise
    return env, tasks, config


async def evaluate(
    env_id: str,
    *,
    model: str,
    out: str | os.PathLike[str],
    base_url: str | None = None,
    num_tasks: int | None = None,
    rollouts: int = 1,
    max_turns: int | None = None,
    seed: int = 0,
    split: str = "test",
    sampling: Sampling | None = None,
    env_args: Mapping[str, Any] | None = None,
    group_advantages: bool = False,
    shuffle: bool = False,
    logprobs: bool = False,
    options: EvalOptions | None = None,
    started: tuple[Environment, str] | None = None,
) -> Summary:
    """Evaluate ``env_id`` against ``model`` into a new run directory ``out``.

    ``group_advantages``: treat the ``rollouts`` of a task as a GRPO group and write each
    rollout's group-relative advantage in ``extra.advantage`` (the group is written together).
    ``shuffle``: a seeded random sample of ``num_tasks`` tasks instead of the first ones.
    ``logprobs``: record each answer's tokens and log-probabilities in ``extra.tokens``.
    ``started``: see :func:`prepare_run` (it is closed at the end like one this call started).
    """
    opts = options or EvalOptions()
    env, tasks, config = prepare_run(
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
        options=opts,
        shuffle=shuffle,
        logprobs=logprobs,
        started=started,
    )
    rundir = RunDir(out)
    try:
        rundir.ensure_new()  # fail before starting a model
        env = grading_env(env, config, opts)
        async with open_client(model, base_url, opts, env=env, tasks=tasks) as client:
            with rundir.writing("eval"):
                rundir.create(config)
                return await run_tasks(env, client, config, rundir, tasks, opts)
    finally:
        await env.aclose()


async def resume(
    out: str | os.PathLike[str], *, options: EvalOptions | None = None, base_url: str | None = None
) -> Summary:
    """Finish the run in ``out``: only the missing (task, rollout_index) pairs run.

    Everything that defines the run comes from its ``config.json``. ``base_url`` serves the
    same model from another address (a moved server, a corrected URL); once the endpoint
    answers it is recorded in ``config.json`` for later resumes.
    """
    opts = options or EvalOptions()
    rundir = RunDir(out)
    config = rundir.load_config()
    if base_url is not None and is_local_model(config.model):
        raise UsageError(f"the run in {out} uses {config.model}, which needs no --base-url; drop it")
    env = open_environment(config.env_id, config.env_args, opts)
    current_hash = package_hash(config.env_id)
    if current_hash != config.env_hash or env.version != config.env_version:
        _close_now(env)
        raise RunDirError(
            f"cannot resume {out}: environment {config.env_id} changed since the run started "
            f"(version {config.env_version} -> {env.version}); start a new run"
        )
    tasks = config.task_selection(env)
    if config.tasks_sha256 is not None and tasks.sha256() != config.tasks_sha256:
        raise RunDirError(
            f"cannot resume {out}: the tasks {config.env_id} selects are not the ones the run started "
            "with (its data changed); start a new run"
        )
    try:
        env = grading_env(env, config, opts)  # the grading backend is not part of the config
        with rundir.writing("eval --resume"):  # before the model starts: a busy run fails fast
            async with open_client(
                config.model, base_url or config.base_url, opts, env=env, tasks=tasks
            ) as client:
                if base_url is not None and base_url != config.base_url:
                    config = config.model_copy(update={"base_url": base_url})
                    rundir.replace_config(config)
                return await run_tasks(env, client, config, rundir, tasks, opts)
    finally:
        await env.aclose()


def grading_env(env: Environment, config: RunConfig, options: EvalOptions) -> Environment:
    """``env`` as the runner should use it: itself, or wrapped so that it grades on Ray.

    With ``grade_on="ray"`` the result is a :class:`hub.run.ray_grading.RayGradedEnv` around
    ``env`` (tasks, ``reset`` and ``step`` stay here; each Ray worker loads the environment
    ``config.env_id`` with ``config.env_args`` once and grades there).
    """
    if options.grade_on == "local":
        if options.ray_address is not None:
            raise UsageError("--ray-address needs --grade-on ray")
        return env
    if options.grade_on == "ray":
        from hub.run.ray_grading import RayGradedEnv

        return RayGradedEnv(config.env_id, env_args=config.env_args, inner=env, address=options.ray_address)
    raise UsageError(f"--grade-on must be local or ray, not {options.grade_on!r}")


async def run_tasks(
    env: Environment,
    client: ChatClient,
    config: RunConfig,
    rundir: RunDir,
    tasks: Iterable[Task],
    opts: EvalOptions,
) -> Summary:
    """Run ``tasks`` into ``rundir`` with the options' concurrency, grade limit and callbacks."""
    runner = Runner(
        env=env,
        client=client,
        config=config,
        rundir=rundir,
        concurrency=opts.concurrency,
        grade_timeout_s=opts.grade_timeout_s,
        on_rollout=opts.on_rollout,
        on_start=opts.on_start,
        retry_errors=opts.retry_errors,
    )
    return await runner.run(tasks)
