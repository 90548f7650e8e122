"""The runner: evaluates ``tasks x rollouts`` of an environment against a model.

- bounded concurrency: ``concurrency`` worker coroutines pull (task, rollout_index) pairs from
  one lazy queue, so nothing grows with the size of the run;
- every finished rollout is appended to ``rollouts.jsonl`` at once (see :mod:`hub.run.rundir`);
- a failing model call, environment or grader is recorded on that rollout as an error (never
  as a wrong answer) and the run goes on; grading has a hard timeout;
- resume: pairs already on disk are skipped, so each (task, rollout_index) appears once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
import zlib
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from hub.env import (
    Environment,
    EnvironmentGoneError,
    Message,
    ModelConfigError,
    ModelError,
    Rollout,
    RolloutError,
    RunDirError,
    Task,
    Timing,
    Usage,
    UsageError,
    final_answer,
    grade_rollout,
    one_line,
    with_grade,
    with_metrics,
)
from hub.run.client import ChatClient
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.rundir import RunConfig, RunDir

__all__ = [
    "ProgressCallback",
    "Runner",
    "StartCallback",
    "with_advantages",
]

ProgressCallback = Callable[[Rollout, SummaryBuilder], None]
StartCallback = Callable[[int, int], None]
"""Called once before the first rollout with (total rollouts, rollouts already done)."""


def with_advantages(group: list[Rollout]) -> list[Rollout]:
    """Group-relative advantages (r - mean) / std over a task's graded rollouts (GRPO).

    A group whose rewards are all equal gets advantage 0 for every rollout (no learning
    signal); errored rollouts get None.
    """
    rewards = [r.reward for r in group if r.reward is not None]
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    std = (sum((x - mean) ** 2 for x in rewards) / len(rewards)) ** 0.5 if rewards else 0.0
    out = []
    for r in group:
        adv = None if r.reward is None else (0.0 if std < 1e-12 else (r.reward - mean) / std)
        out.append(r.model_copy(update={"extra": {**r.extra, "advantage": adv}}))
    return out


@dataclass
class Runner:
    """Runs one evaluation into a run directory (create or resume it first)."""

    env: Environment
    client: ChatClient
    config: RunConfig
    rundir: RunDir
    concurrency: int = 32
    grade_timeout_s: float = 60.0
    on_rollout: ProgressCallback | None = None
    on_start: StartCallback | None = None
    retry_errors: bool = False
    """Run again the rollouts that ended in a model or environment error (the failed attempts
    move to ``failed_attempts.jsonl`` and are listed in the new record's ``extra``)."""

    async def run(self, tasks: Iterable[Task]) -> Summary:
        """Run every missing (task, rollout_index) of ``tasks`` and write the summary.

        ``tasks`` is iterated again when the run resumes, so pass a list or a
        :class:`TaskSelection` (which regenerates the tasks instead of holding them).
        """
        if self.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        with self.rundir.writing("eval"), _fewer_young_collections():
            return await self._run_locked(tasks)

    async def _run_locked(self, tasks: Iterable[Task]) -> Summary:
        self.rundir.repair()
        if self.retry_errors:
            self.rundir.set_aside_errors()
        if self.config.group_advantages:
            self.rundir.drop_partial_groups(self.config.rollouts_per_task)
        failed = self.rundir.failed_attempts()
        done = self.rundir.done_keys()
        builder = SummaryBuilder(
            env_id=self.config.env_id,
            env_version=self.config.env_version,
            model=self.config.model,
            rollouts_per_task=self.config.rollouts_per_task,
        )
        if done:
            selected = [t.id for t in tasks]
            foreign = {tid for tid, _ in done} - set(selected)
            if foreign:
                raise RunDirError(
                    f"{self.rundir.path} has rollouts for tasks this environment no longer selects "
                    f"(e.g. {sorted(foreign)[0]!r}); the environment changed, start a new run"
                )
            for tid in selected:
                builder.add_task(tid)
            builder.extend(self.rundir.iter_rollouts())
        self.builder = builder

        def pending_pairs() -> Iterator[tuple[Task, int]]:
            indices = range(self.config.rollouts_per_task)
            for task in tasks:
                builder.add_task(task.id)
                for i in indices:
                    if not done or (task.id, i) not in done:
                        yield task, i

        pending = pending_pairs()
        tools = self.env.tool_schemas()
        if self.on_start is not None:
            total = (self.config.num_tasks or 0) * self.config.rollouts_per_task
            self.on_start(total, builder.n_rollouts)
        with self.rundir.open_writer() as writer:
            groups: dict[str, list[Rollout]] = {}
            group_size = self.config.rollouts_per_task

            def finish(rollouts: list[Rollout]) -> None:
                for r in rollouts:
                    builder.add(r)
                    if self.on_rollout is not None:
                        self.on_rollout(r, builder)

            grouped = self.config.group_advantages
            on_rollout = self.on_rollout

            async def worker() -> None:
                for task, index in pending:
                    rollout = await self.run_one(task, index, tools)
                    earlier = failed.get((task.id, index)) if failed else None
                    if earlier:
                        rollout = rollout.model_copy(
                            update={"extra": {**rollout.extra, "failed_attempts": earlier}}
                        )
                    if not grouped:
                        writer.write(rollout)
                        builder.add(rollout)
                        if on_rollout is not None:
                            on_rollout(rollout, builder)
                        continue
                    group = groups.setdefault(task.id, [])
                    group.append(rollout)
                    if len(group) == group_size:
                        del groups[task.id]
                        complete = with_advantages(sorted(group, key=lambda r: r.rollout_index))
                        writer.write_many(complete)
                        finish(complete)

            try:
                await _all_or_nothing([worker() for _ in range(self.concurrency)])
            except ModelConfigError as exc:
                total = (self.config.num_tasks or 0) * self.config.rollouts_per_task
                raise ModelConfigError(
                    f"{exc}. The run stopped: {builder.n_rollouts} of {total} rollouts are saved; fix "
                    f"this, then `verihub eval --resume {self.rundir.path}` runs the rest"
                ) from exc
        summary = builder.build()
        self.rundir.write_summary(summary)
        return summary

    async def run_one(self, task: Task, index: int, tools: list[dict[str, object]] | None = None) -> Rollout:
        """One rollout of ``task``: model turns, environment steps, then the grade."""
        started = time.time()
        t0 = time.perf_counter()
        model_s = env_s = 0.0
        prompt_tokens = completion_tokens = 0
        first_usage: Usage | None = None
        error: RolloutError | None = None
        truncated = False
        turns = 0
        seed = _rollout_seed(self.config.seed, task.id, index)
        messages: list[Message] = []
        ask: dict[str, Any] = {"logprobs": True} if self.config.logprobs else {}
        tokens: list[dict[str, object]] = []
        try:
            state = await self.env.reset(task)
            messages = state.messages
            mark = time.perf_counter()  # one clock reading between phases: each ends the last
            env_s += mark - t0
            while True:
                if turns >= self.config.max_turns:
                    truncated = True
                    break
                completion = await self.client.chat(
                    state.messages, sampling=self.config.sampling, tools=tools, seed=seed, **ask
                )
                now = time.perf_counter()
                model_s += now - mark
                if completion.tokens is not None:
                    tokens.append({"message_index": len(state.messages), **completion.tokens})
                prompt_tokens += completion.usage.prompt_tokens
                completion_tokens += completion.usage.completion_tokens
                if first_usage is None:
                    first_usage = completion.usage
                turns += 1
                state.turn = turns
                state.messages.append(completion.message)
                step = await self.env.step(state, completion.message)
                mark = time.perf_counter()
                env_s += mark - now
                state.messages.extend(step.messages)
                if step.terminated:
                    truncated = completion.finish_reason == "length"
                    break
                if step.truncated:
                    truncated = True
                    break
        except (ModelConfigError, EnvironmentGoneError):
            raise  # every rollout would fail the same way: stop the run
        except ModelError as exc:
            error = RolloutError(kind="model", message=one_line(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an environment bug is recorded on the rollout
            error = RolloutError(kind="environment", message=f"{type(exc).__name__}: {one_line(exc)}")
        timing = _TIMING(
            {"started_at": started, "model_s": model_s, "env_s": env_s, "total_s": time.perf_counter() - t0}
        )
        if turns == 1 and first_usage is not None:  # one answer: its own usage is the total
            usage = first_usage
        else:
            usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        fields: dict[str, Any] = {
            "task_id": task.id,
            "rollout_index": index,
            "messages": messages,
            "usage": usage,
            "timing": timing,
            "error": error,
            "turns": turns,
            "truncated": truncated,
            "extra": {"tokens": tokens} if tokens else {},
        }
        rollout: Rollout
        try:
            fields["completion"] = final_answer(messages)
            rollout = _ROLLOUT(fields)  # Rollout(**fields), without the wrapper
        except Exception as exc:  # the environment put something that is not a Message in the transcript
            kept = [m for m in messages if isinstance(m, Message)]
            bad = RolloutError(
                kind="environment",
                message=f"the transcript cannot be recorded ({type(exc).__name__}: {one_line(exc)}); "
                "reset/step must put Message objects in state.messages",
            )
            fields.update(messages=kept, completion=final_answer(kept), error=error or bad)
            rollout = _ROLLOUT(fields)
        if rollout.error is not None:
            return rollout
        tg = time.perf_counter()
        grade = await grade_rollout(self.env, task, rollout, timeout_s=self.grade_timeout_s)
        graded = with_grade(rollout, grade, time.perf_counter() - tg, in_place=True)  # built above: ours
        return with_metrics(self.env, task, graded)


_ROLLOUT = Rollout.__pydantic_validator__.validate_python
_TIMING = Timing.__pydantic_validator__.validate_python


async def _all_or_nothing(coros: list[Coroutine[Any, Any, None]]) -> None:
    """Run the workers; if one fails, cancel the others and raise its error."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


_YOUNG_THRESHOLD = 10_000
_collections_lock = threading.Lock()
_runs_going = 0
_saved_threshold: tuple[int, int, int] = (700, 10, 10)


@contextlib.contextmanager
def _fewer_young_collections() -> Iterator[None]:
    """While runs go, the cyclic collector looks at the youngest objects every 10,000 allocations
    instead of Python's default 700. A rollout allocates a few hundred objects that reference
    counting frees at once; with the default the collector runs every few rollouts and finds
    nothing (about 1.5% of the runner's instructions). Restored when the last run ends."""
    global _runs_going, _saved_threshold
    with _collections_lock:
        if _runs_going == 0:
            _saved_threshold = gc.get_threshold()
            young, *older = _saved_threshold
            gc.set_threshold(max(young, _YOUNG_THRESHOLD), *older)
        _runs_going += 1
    try:
        yield
    finally:
        with _collections_lock:
            _runs_going -= 1
            if _runs_going == 0:
                gc.set_threshold(*_saved_threshold)


def _rollout_seed(seed: int, task_id: str, index: int) -> int:
    """A stable per-rollout sampling seed, different for each rollout of a task."""
    return zlib.crc32(f"{seed}:{task_id}:{index}".encode()) & 0x7FFFFFFF
