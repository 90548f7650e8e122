"""verihub environments as verifiers 0.4.x (``verifiers.v1``) tasksets, for ``vf-eval`` and
verifiers-based trainers.

This module is itself a v1 taskset package (its ``__all__`` exports one ``Taskset`` subclass), so
``vf-eval verihub-v1 --env.taskset.env arith ...`` finds it; from Python: ``to_v1_taskset("arith",
n=20)``. Each task's data carries the verihub task; the ``@vf.reward`` ``verihub_reward`` grades
the transcript with the environment's ``grade`` under a hard timeout (a grader error or timeout
scores ``error_value``; the grade is kept in ``trace.info["verihub_grade"]``), and the
``@vf.metric`` ``verihub_passed`` is 1 for a passing grade. Multi-turn environments are played by
:class:`hub.train.v1_episode.VerihubEnv`; tools come as :class:`hub.train.v1_toolset.VerihubToolset`.
The full command line and the rules: docs/training.md, "verifiers 0.4.x (v1)".
Importing this module imports ``verifiers.v1`` (install ``verihub[verifiers]``).
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from graders.grade import Grade
from hub.env import (
    Environment,
    Message,
    Rollout,
    Task,
    Timing,
    ToolCall,
    UsageError,
    grade_rollout,
    select_tasks,
)
from hub.train.v1_toolset import tools_refusal, verihub_toolsets

__all__ = ["VerihubTask", "VerihubTaskData", "VerihubTaskset", "hub_task", "task_data", "to_v1_taskset"]

logger = logging.getLogger("verihub.interop")
vf: Any = importlib.import_module("verifiers.v1")
_ENVS: dict[str, Environment] = {}


class VerihubTaskData(vf.TaskData):  # type: ignore[misc]
    """One verihub task: its id, answer and metadata (JSON text), and the environment's id."""

    verihub_env: str
    verihub_env_args: str = "{}"
    task_id: str
    answer: str = "null"
    metadata: str = "{}"
    grade_timeout_s: float = 60.0
    error_value: float = 0.0


class VerihubTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    """``--env.taskset.*`` flags: which verihub environment, its arguments, split and size."""

    env: str = ""
    env_args: dict[str, Any] = {}  # noqa: RUF012 - a pydantic field (copied per instance)
    split: str = "test"
    n: int | None = None
    seed: int = 0
    grade_timeout_s: float = 60.0
    error_value: float = 0.0


def _environment(env_id: str, args_json: str) -> Environment:
    """The verihub environment, built once per process for each (id, arguments)."""
    key = f"{env_id}\0{args_json}"
    if key not in _ENVS:
        from hub.registry import load_environment

        env = load_environment(env_id, **json.loads(args_json))
        reason = tools_refusal(env)
        if reason is not None:
            raise UsageError(f"{env_id} has tools a v1 toolset cannot serve: {reason}")
        _ENVS[key] = env
    return _ENVS[key]


def _hub_messages(messages: Iterable[Any]) -> list[Message]:
    from verifiers.v1.types import content_text

    out = []
    for m in messages:
        if m.role not in ("system", "user", "assistant", "tool"):
            continue
        calls = getattr(m, "tool_calls", None)
        out.append(
            Message(
                role=m.role,
                content=None if calls and not m.content else str(content_text(m.content) or ""),
                tool_calls=tuple(ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in calls)
                if calls
                else None,
                tool_call_id=getattr(m, "tool_call_id", None),
                name=getattr(m, "name", None) if m.role == "tool" else None,
            )
        )
    return out


def hub_task(data: VerihubTaskData) -> Task:
    """The verihub task a v1 task's data carries."""
    return Task(
        id=data.task_id,
        prompt=tuple(_hub_messages(data.prompt or [])),
        answer=json.loads(data.answer),
        metadata=json.loads(data.metadata),
    )


class VerihubTask(vf.Task[VerihubTaskData]):  # type: ignore[misc]
    """A verihub task; scored by the verihub environment's grader."""

    async def _grade(self, task: VerihubTaskData, trace: Any) -> Grade:
        cached = trace.info.get("verihub_grade")
        if cached is not None:
            return Grade.model_validate(cached)
        env = _environment(task.verihub_env, task.verihub_env_args)
        vh_task = hub_task(task)
        messages = _hub_messages(trace.messages) or list(vh_task.messages(None))
        reply = trace.last_reply
        if not messages or messages[-1].role != "assistant":
            messages.append(Message(role="assistant", content=reply))
        rollout = Rollout(
            task_id=vh_task.id,
            rollout_index=0,
            messages=messages,
            completion=reply,
            timing=Timing(started_at=time.time()),
            turns=max(1, sum(m.role == "assistant" for m in messages)),
        )
        grade = await grade_rollout(env, vh_task, rollout, timeout_s=task.grade_timeout_s)
        if grade.is_error:
            logger.warning("verihub grader %s on task %s: %s", grade.status, vh_task.id, grade.reason)
        trace.info["verihub_grade"] = grade.model_dump(mode="json")
        return grade

    @vf.metric  # type: ignore[untyped-decorator]
    async def verihub_passed(self, task: VerihubTaskData, trace: Any) -> float:
        return 1.0 if (await self._grade(task, trace)).passed else 0.0

    @vf.reward  # type: ignore[untyped-decorator]
    async def verihub_reward(self, task: VerihubTaskData, trace: Any) -> float:
        grade = await self._grade(task, trace)
        return task.error_value if grade.is_error else float(grade.score)


class VerihubTaskset(vf.Taskset[VerihubTask, VerihubTasksetConfig]):  # type: ignore[misc]
    """A verihub environment's tasks as v1 tasks (see the module doc)."""

    @classmethod
    def toolsets(cls, config: VerihubTasksetConfig) -> list[Any]:
        """The environment's tools as one shared v1 tool server (none without tools)."""
        if not config.env:
            return []
        args_json = json.dumps(config.env_args, sort_keys=True)
        return verihub_toolsets(_environment(config.env, args_json), config.env, args_json)

    def load(self) -> Iterable[VerihubTask]:
        cfg = self.config
        if not cfg.env:
            raise UsageError("say which verihub environment: --env.taskset.env ENV_ID (see `verihub list`)")
        args_json = json.dumps(cfg.env_args, sort_keys=True)
        env = _environment(cfg.env, args_json)
        if cfg.split not in env.splits:
            raise UsageError(f"{cfg.env} has no split {cfg.split!r}; it has: {', '.join(env.splits)}")
        for t in select_tasks(env, split=cfg.split, seed=cfg.seed, num_tasks=cfg.n):
            yield VerihubTask(task_data(env, t, cfg), cfg.task)


def task_data(env: Environment, t: Task, cfg: VerihubTasksetConfig) -> VerihubTaskData:
    """The v1 task data of verihub task ``t`` of ``env`` under taskset config ``cfg``."""
    msgs = t.messages(env.system_prompt)
    return VerihubTaskData(
        id=t.id,
        prompt=[{"role": m.role, "content": m.content or ""} for m in msgs],
        verihub_env=cfg.env,
        verihub_env_args=json.dumps(cfg.env_args, sort_keys=True),
        task_id=t.id,
        answer=json.dumps(to_jsonable_python(t.answer)),
        metadata=json.dumps(to_jsonable_python(t.metadata)),
        grade_timeout_s=cfg.grade_timeout_s,
        error_value=cfg.error_value,
    )


def to_v1_taskset(
    env_id: str,
    *,
    env_args: Mapping[str, Any] | None = None,
    split: str = "test",
    n: int | None = None,
    seed: int = 0,
    grade_timeout_s: float = 60.0,
    error_value: float = 0.0,
) -> VerihubTaskset:
    """The installed verihub environment ``env_id`` as a v1 taskset (its first ``n`` tasks of
    ``split``), for verifiers' ``Env``/trainers; ``vf-eval`` reaches the same through this
    module's name and ``--env.taskset.*`` flags."""
    config = VerihubTasksetConfig(
        id=__name__,
        env=env_id,
        env_args=dict(env_args or {}),
        split=split,
        n=n,
        seed=seed,
        grade_timeout_s=grade_timeout_s,
        error_value=error_value,
    )
    return VerihubTaskset(config)
