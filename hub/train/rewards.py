"""Rewards for RL trainers: a verihub environment as a TRL ``GRPOTrainer`` reward function.

::

    env = load_environment("arith")
    dataset = to_dataset(env, "train", 1000, seed=0)       # prompt + task_id, answer, metadata
    trainer = GRPOTrainer(model=..., reward_funcs=reward_function(env), train_dataset=dataset, ...)

The trainer calls ``reward(prompts=[...], completions=[...], task_id=[...], log_metric=..., ...)``
with one entry per completion and reads back one float each; with a curriculum the reward logs
its rung after each batch as ``curriculum/rung`` (0: the easiest). Grading goes through the
environment's own ``grade`` on a private event loop in a background thread, so the reward works
from synchronous code and from inside a running loop. A grader that crashes or times out gets
``error_value`` (default 0.0; None lets TRL treat the row as missing), counted in
:attr:`EnvReward.stats`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_core import to_jsonable_python

from graders.grade import Grade
from hub.env import (
    POINT_KEY,
    Message,
    OutcomeObserver,
    Rollout,
    Task,
    Timing,
    UsageError,
    grade_rollout,
    select_tasks,
)

if TYPE_CHECKING:
    from datasets import Dataset

    from hub.env import Environment

__all__ = ["EnvReward", "RewardStats", "completion_text", "reward_function", "task_row", "to_dataset"]

logger = logging.getLogger("verihub.rl")
T = TypeVar("T")


@dataclass
class RewardStats:
    """Running counts of an :class:`EnvReward` (read them to see how often grading failed)."""

    calls: int = 0
    graded: int = 0
    errors: int = 0
    timeouts: int = 0
    timed_out_responses: int = 0
    """Completions whose grading ran out of time: the response's failure, rewarded 0 like a
    wrong answer (also counted in ``graded``), never ``error_value``."""
    grader_failures: int = 0
    """Completions the grader raised on (reason ``grader_failed``): rewarded 0 like a wrong
    answer (also counted in ``graded``), never ``error_value``; a grader bug to fix."""

    @property
    def failed(self) -> int:
        """Completions whose grading infrastructure failed or timed out (they got ``error_value``)."""
        return self.errors + self.timeouts


class _LoopThread:
    """A private event loop in a daemon thread; coroutines are submitted from any thread."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="verihub-reward", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._ensure()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:  # called from a grader on our own loop: would deadlock
            coro.close()
            raise RuntimeError("the verihub reward function cannot be called from inside its own grader")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def close(self) -> None:
        with self._lock:
            if self._loop is not None and not self._loop.is_closed():
                loop = self._loop
                loop.call_soon_threadsafe(loop.stop)
                self._loop = None


class EnvReward:
    """A TRL-compatible reward function that grades with a verihub environment.

    Call it as the trainer does: ``reward(prompts=..., completions=..., task_id=..., answer=...)``.
    ``completions`` are strings (standard format) or lists of chat messages (conversational
    format, the last assistant message is graded). Use :func:`reward_function` to build one.
    """

    def __init__(
        self,
        env: Environment,
        *,
        error_value: float | None = 0.0,
        timeout_s: float = 60.0,
        concurrency: int = 64,
        name: str | None = None,
        curriculum: OutcomeObserver | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise UsageError("timeout_s must be positive")
        if concurrency < 1:
            raise UsageError("concurrency must be at least 1")
        self.env = env
        self.error_value = error_value
        self.timeout_s = timeout_s
        self.concurrency = concurrency
        self.stats = RewardStats()
        self.curriculum = curriculum
        # TRL logs each reward under its function's __name__.
        self.__name__ = name or f"verihub_{env.id}"
        self._loop = _LoopThread()
        self._stats_lock = threading.Lock()

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """One reward per completion. Dataset columns arrive as lists aligned with ``completions``."""
        grades = self.grade_batch(prompts=prompts, completions=completions, **kwargs)
        return [self._value(g) for g in grades]

    def grade_batch(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[Grade]:
        """Like calling the reward, but returns the full :class:`Grade` of each completion."""
        if completions is None:
            raise UsageError("the reward needs completions=[...] (as GRPOTrainer passes them)")
        n = len(completions)
        task_ids = _column(kwargs, "task_id", n)
        answers = _column(kwargs, "answer", n)
        metas = kwargs.get("metadata")
        prompt_list: Sequence[Any] = prompts if prompts is not None else [None] * n
        if len(prompt_list) != n or (metas is not None and len(metas) != n):
            raise UsageError("prompts, completions and dataset columns must have the same length")
        jobs = [
            _job(
                task_id=str(task_ids[i]),
                prompt=prompt_list[i],
                completion=completions[i],
                answer=answers[i],
                metadata=None if metas is None else metas[i],
            )
            for i in range(n)
        ]
        grades = self._loop.run(self._grade_all(jobs))
        self._count(grades)
        if self.curriculum is not None:
            self._teach(self.curriculum, jobs, grades)
            rung = getattr(self.curriculum, "current", None)
            log_metric = kwargs.get("log_metric")
            if callable(log_metric) and isinstance(rung, int):
                log_metric("curriculum/rung", float(rung))  # TRL logs it beside the rewards
        return grades

    def _teach(
        self, curriculum: OutcomeObserver, jobs: list[tuple[Task, Rollout]], grades: list[Grade]
    ) -> None:
        """Report each task's group of rewards (completions sharing a task id) to the curriculum;
        tasks without a difficulty point in their metadata are not reported."""
        groups: dict[str, tuple[Any, list[float | None]]] = {}
        for (task, _), grade in zip(jobs, grades, strict=True):
            point = task.metadata.get(POINT_KEY)
            if isinstance(point, Mapping):
                groups.setdefault(task.id, (point, []))[1].append(self._value(grade))
        for point, values in groups.values():
            curriculum.observe(point, values)

    async def _grade_all(self, jobs: list[tuple[Task, Rollout]]) -> list[Grade]:
        sem = asyncio.Semaphore(self.concurrency)

        async def one(task: Task, rollout: Rollout) -> Grade:
            async with sem:
                return await grade_rollout(self.env, task, rollout, timeout_s=self.timeout_s)

        return list(await asyncio.gather(*(one(t, r) for t, r in jobs)))

    def _value(self, grade: Grade) -> float | None:
        return self.error_value if grade.is_error else grade.score

    def _count(self, grades: list[Grade]) -> None:
        with self._stats_lock:
            self.stats.calls += 1
            for g in grades:
                if g.status == "timeout":
                    self.stats.timeouts += 1
                elif g.status == "error":
                    self.stats.errors += 1
                else:
                    self.stats.graded += 1
                    if g.status == "incorrect" and g.reason.startswith("timeout"):
                        self.stats.timed_out_responses += 1
                    self.stats.grader_failures += g.grader_failed
        crashed = [g for g in grades if g.grader_failed]
        if crashed:
            logger.warning(
                "%s: the grader raised on %d of %d completions (rewarded 0); first: %s",
                self.__name__,
                len(crashed),
                len(grades),
                crashed[0].reason,
            )
        failed = [g for g in grades if g.is_error]
        if failed:
            logger.warning(
                "%s: %d of %d completions could not be graded (reward %s); first: %s",
                self.__name__,
                len(failed),
                len(grades),
                self.error_value,
                failed[0].reason,
            )

    def close(self) -> None:
        """Stop the background grading loop (a later call starts a new one)."""
        self._loop.close()

    def __getstate__(self) -> dict[str, Any]:
        # picklable (trainers may copy or ship reward functions): the loop thread and lock are
        # per process and made again on arrival
        state = dict(self.__dict__)
        del state["_loop"], state["_stats_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._loop = _LoopThread()
        self._stats_lock = threading.Lock()


def reward_function(
    env: Environment,
    *,
    error_value: float | None = 0.0,
    timeout_s: float = 60.0,
    concurrency: int = 64,
    name: str | None = None,
    curriculum: OutcomeObserver | None = None,
) -> EnvReward:
    """A reward function for TRL's ``GRPOTrainer`` (``reward_funcs=``) that grades with ``env``.

    ``error_value``: reward for a completion whose grader crashed or timed out (counted in
    ``.stats`` and logged; None makes TRL treat it as missing). ``timeout_s``: hard limit per
    grade. ``concurrency``: grades in flight per batch. The dataset must carry ``task_id`` and
    ``answer`` columns as :func:`to_dataset` writes them. ``curriculum`` (a
    :class:`hub.train.Curriculum`) learns from every batch's rewards, one group per task id.
    """
    return EnvReward(
        env,
        error_value=error_value,
        timeout_s=timeout_s,
        concurrency=concurrency,
        name=name,
        curriculum=curriculum,
    )


def to_dataset(env: Environment, split: str = "train", n: int | None = None, *, seed: int = 0) -> Dataset:
    """The first ``n`` tasks of ``split`` as a Hugging Face dataset for GRPO training.

    Columns: ``prompt`` (chat messages, system prompt included), ``task_id``, ``answer`` (the
    reference, JSON-encoded: it is never shown to the model) and ``metadata`` (JSON-encoded).
    """
    from datasets import Dataset

    if split not in env.splits:
        raise UsageError(f"{env.id} has no split {split!r}; it has: {', '.join(env.splits)}")
    tasks = select_tasks(env, split=split, seed=seed, num_tasks=n)
    return Dataset.from_list([task_row(env, t) for t in tasks])


def task_row(env: Environment, task: Task) -> dict[str, Any]:
    """One training row of ``task``: the columns :func:`to_dataset` writes."""
    return {
        "prompt": [_chat(m) for m in task.messages(env.system_prompt)],
        "task_id": task.id,
        "answer": json.dumps(to_jsonable_python(task.answer)),
        "metadata": json.dumps(to_jsonable_python(task.metadata)),
    }


def completion_text(completion: Any) -> str:
    """The text to grade: a string as is; of a message list, the last assistant message."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    if isinstance(completion, Sequence):
        for m in reversed(completion):
            if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant":
                return _content_text(m.get("content"))
        return ""
    raise UsageError(
        f"a completion must be a string or a list of chat messages, got {type(completion).__name__}"
    )


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # multimodal parts: keep the text parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(content)


def _chat(m: Message) -> dict[str, Any]:
    return {"role": m.role, "content": m.content or ""}


def _column(kwargs: Mapping[str, Any], name: str, n: int) -> Sequence[Any]:
    col = kwargs.get(name)
    if col is None:
        raise UsageError(
            f"the reward needs the dataset column {name!r}; build the dataset with hub.train.to_dataset"
        )
    if len(col) != n:
        raise UsageError(f"column {name!r} has {len(col)} entries for {n} completions")
    return list(col)


def _decode(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value  # a plain string column written by hand
    return value


def _messages(prompt: Any) -> list[Message]:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [Message(role="user", content=prompt)]
    out = []
    for m in prompt:
        role = m.get("role", "user")
        if role in ("system", "user", "assistant", "tool"):
            out.append(Message(role=role, content=_content_text(m.get("content"))))
    return out


def _job(*, task_id: str, prompt: Any, completion: Any, answer: Any, metadata: Any) -> tuple[Task, Rollout]:
    text = completion_text(completion)
    meta = _decode(metadata) if metadata is not None else {}
    opening = _messages(prompt)
    task = Task(
        id=task_id,
        prompt=tuple(opening) if opening else "",
        answer=_decode(answer),
        metadata=meta if isinstance(meta, dict) else {},
    )
    rollout = Rollout(
        task_id=task_id,
        rollout_index=0,
        messages=[*opening, Message(role="assistant", content=text)],
        completion=text,
        timing=Timing(started_at=time.time()),
        turns=1,
    )
    return task, rollout
