"""verifiers 0.4.x (``verifiers.v1``) tasksets as verihub environments, run in-process.

:func:`load_v1_taskset` finds a taskset the way ``vf-eval`` does (a module whose ``__all__``
exports exactly one ``vf.Taskset`` subclass) and builds it from its ``TasksetConfig``; the result
is a verihub environment (``verihub eval verifiers-v1 --env-arg taskset=MODULE``). verihub's runner
calls the model as a plain chat/tool loop; the task's ``@vf.stop`` methods run on a v1 ``Trace``
after each turn, tool calls go to its plain-Python Toolsets (:mod:`hub.train.v1_tools`), and
grading calls the task's own ``Task.score(trace)`` (each reward a weighted ``Check``; one that
raises is a grader error).

What cannot run in-process is refused in one line naming the feature: ``NEEDS_CONTAINER``, tool
servers that need MCP, a taskset's own Harness or ``Env``, task ``setup``/``finalize`` hooks and
rewards that require a runtime. In full: docs/training.md, "A v1 taskset in verihub".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from graders.grade import Check, Grade
from hub.env import Environment, Message, Rollout, State, Step, Task, UnknownSplitError, UsageError
from hub.train.v1_tools import V1Tools, bridge_toolsets

__all__ = ["V1TasksetEnv", "load_environment", "load_v1_taskset", "v1_trace"]

_ROLES = ("system", "user", "assistant", "tool")


def _v1() -> Any:
    """``verifiers.v1``, or a one-line error naming the verifiers found."""
    try:
        import verifiers.v1 as vf
    except ImportError as exc:
        raise UsageError(
            f"verifiers 0.4.x is not installed ({exc}): `pip install 'verihub[verifiers]'`"
        ) from exc
    if not hasattr(vf, "Taskset"):
        import verifiers

        raise UsageError(
            f"verifiers {getattr(verifiers, '__version__', '?')} has no verifiers.v1 Taskset API: "
            "`pip install 'verihub[verifiers]'` (0.4.x); for 0.3.x environments use "
            "hub.train.verifiers_adapter"
        )
    return vf


def _overrides(obj: Any, base: type, name: str) -> bool:
    return getattr(type(obj), name, None) is not getattr(base, name, None)


def _refuse(taskset_id: str, feature: str) -> UsageError:
    return UsageError(
        f"v1 taskset {taskset_id!r} uses {feature}, which verihub cannot run in-process; "
        "run it with vf-eval instead"
    )


def _check_runnable(taskset_id: str, taskset: Any, task: Any) -> None:
    """Refuse what needs a runtime, tool servers or a non-chat harness (one line each)."""
    import inspect

    from verifiers.v1.task import Task as V1Task
    from verifiers.v1.utils.loaders import import_taskset

    vf = _v1()
    module = import_taskset(taskset_id)
    exported = [getattr(module, n, None) for n in getattr(module, "__all__", ())]
    for obj in exported:
        if isinstance(obj, type) and issubclass(obj, vf.Harness) and obj is not vf.Harness:
            raise _refuse(taskset_id, f"its own harness {obj.__name__} (only a plain chat runs in-process)")
        if isinstance(obj, type) and issubclass(obj, vf.Env) and obj is not vf.Env:
            raise _refuse(taskset_id, f"its own Env {obj.__name__} (multi-agent episodes)")
    if getattr(task, "NEEDS_CONTAINER", False):
        raise _refuse(taskset_id, f"a container (task {type(task).__name__} sets NEEDS_CONTAINER)")
    for hook in ("setup", "finalize", "stage_verifier"):
        if _overrides(task, V1Task, hook):
            raise _refuse(taskset_id, f"a task {hook}() hook (it runs in a runtime)")
    for attr in ("reward", "metric"):
        for fn in task.hooks(attr):
            param = inspect.signature(fn).parameters.get("runtime")
            if param is not None and param.default is inspect.Parameter.empty:
                raise _refuse(taskset_id, f"a {attr} {fn.__name__}() that needs a runtime")


def _text(content: Any) -> str:
    from verifiers.v1.types import content_text

    return str(content_text(content)) if content is not None else ""


def _hub_messages(data: Any) -> tuple[Message, ...]:
    out: list[Message] = []
    if data.system_prompt:
        out.append(Message(role="system", content=data.system_prompt))
    prompt = data.prompt
    if isinstance(prompt, str):
        out.append(Message(role="user", content=prompt))
    else:
        for m in prompt or []:
            out.append(Message(role=m.role, content=_text(m.content)))
    return tuple(out)


def v1_trace(task: Any, messages: Iterable[Message], n_prompt: int) -> Any:
    """A v1 ``Trace`` of ``task`` holding ``messages`` as one branch (those after the first
    ``n_prompt`` assistant messages count as sampled model turns)."""
    from pydantic import TypeAdapter
    from verifiers.v1.configs.agent import AgentConfig
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.state import state_cls
    from verifiers.v1.trace import AgentInfo, Trace, TraceTask
    from verifiers.v1.types import Message as V1Message

    adapter: Any = TypeAdapter(V1Message)
    nodes = []
    for i, m in enumerate(messages):
        d: dict[str, Any] = {"role": m.role, "content": m.content or ("" if m.role != "assistant" else None)}
        if m.role == "tool":
            d["tool_call_id"] = m.tool_call_id or ""
            d["name"] = m.name
        if m.role == "assistant" and m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        nodes.append(
            MessageNode(
                parent=i - 1 if i else None,
                message=adapter.validate_python(d),
                sampled=m.role == "assistant" and i >= n_prompt,
            )
        )
    return Trace(
        task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        state=state_cls(type(task))(),
        agent=AgentInfo(config=AgentConfig()),
        nodes=nodes,
    )


class V1TasksetEnv(Environment):
    """A verihub environment running a verifiers v1 taskset in-process (see the module doc)."""

    def __init__(self, taskset_id: str, taskset: Any, *, max_turns: int = 10) -> None:
        super().__init__(id=f"v1:{taskset_id}", max_turns=max_turns)
        self.taskset_id = taskset_id
        self.taskset = taskset
        self._tasks: list[Task] | None = None
        self._v1_tasks: dict[str, Any] = {}
        self._tools: V1Tools | None = None

    def _bridged(self, task_cls: Any = None, task_config: Any = None) -> V1Tools:
        """The taskset's shared and its task class's Toolsets as verihub tools (one set per env:
        a task whose class serves other tools is refused)."""
        ts = self.taskset
        cls = task_cls or type(ts).task_type()
        servers = [*type(ts).toolsets(ts.config), *cls.toolsets(task_config or ts.config.task)]
        tools = bridge_toolsets(servers, lambda feature: _refuse(self.taskset_id, feature))
        if self._tools is None:
            self._tools = tools
        elif set(tools.tools) != set(self._tools.tools):
            raise _refuse(self.taskset_id, f"tasks with different tool servers ({cls.__name__})")
        return self._tools

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        return self._bridged().schemas()

    @property
    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        if split not in self.splits:
            raise UnknownSplitError(split, self.splits)
        if self._tasks is None:
            if not self.taskset.bounded:
                raise UsageError(
                    f"v1 taskset {self.taskset_id!r} is infinite; pass limit=N to load_v1_taskset"
                )
            self._tasks = list(self._convert(iter(self.taskset)))
        return self._tasks

    def _convert(self, tasks: Iterator[Any]) -> Iterator[Task]:
        for v1_task in tasks:
            _check_runnable(self.taskset_id, self.taskset, v1_task)
            self._bridged(type(v1_task), v1_task.config)
            data = v1_task.data
            task_id = str(data.id) if data.id is not None else str(data.idx)
            if task_id in self._v1_tasks:
                raise UsageError(f"v1 taskset {self.taskset_id!r} has two tasks with id {task_id!r}")
            self._v1_tasks[task_id] = v1_task
            yield Task(
                id=task_id,
                prompt=_hub_messages(data),
                metadata={"v1_key": v1_task.key, "name": data.name},
            )

    def _v1_task(self, task: Task) -> Any:
        if task.id not in self._v1_tasks:
            list(self.tasks("test"))
        return self._v1_tasks[task.id]

    async def reset(self, task: Task) -> State:
        return State(task=task, messages=list(task.messages(None)))

    async def step(self, state: State, action: Message) -> Step:
        from verifiers.v1.session import call_hook, hook_boundary
        from verifiers.v1.trace import Trace

        v1_task = self._v1_task(state.task)
        trace = v1_trace(v1_task, state.messages, len(state.task.messages(None)))
        for fn in v1_task.hooks("stop"):
            if hook_boundary(fn, allow_trace=True) is not Trace:
                continue  # Request/Response stops act on model calls inside vf's interception
            fired = await call_hook(fn, {Trace: trace})
            if not isinstance(fired, bool):
                raise UsageError(f"@vf.stop {fn.__name__} must return bool, got {type(fired).__name__}")
            if fired:
                return Step(terminated=True, info={"stop_condition": fn.__name__})
        if action.tool_calls:
            return Step(messages=await self._bridged().answer(action.tool_calls))
        # no user simulator: a plain chat ends at the model's answer
        return Step(terminated=True, info={"stop_condition": "no_user"})

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        v1_task = self._v1_task(task)
        trace = v1_trace(v1_task, rollout.messages, len(task.messages(None)))
        try:
            await v1_task.score(trace, None)
        except Exception as exc:  # a raising reward/metric: the grader failed, not the model
            cause = exc.__cause__ or exc
            return Grade.error(f"v1 scoring raised {type(cause).__name__}: {cause}"[:300])
        return _grade(trace)


def _grade(trace: Any) -> Grade:
    checks: list[Check] = []
    positive = 0.0
    total = 0.0
    for name, reward in trace.rewards.items():
        if reward is None:
            return Grade.error(f"v1 reward {name} was not scored")
        value, weight = float(reward.score), float(reward.weight)
        if not math.isfinite(value):
            return Grade.error(f"v1 reward {name} returned {value}")
        total += value * weight
        if weight > 0:
            positive += weight
            checks.append(
                Check(
                    name=name,
                    score=min(1.0, max(0.0, value)),
                    weight=weight,
                    passed=value >= 1.0,
                    status="correct" if value >= 1.0 else ("partial" if value > 0 else "incorrect"),
                    reason=f"{value:g}",
                )
            )
    score = total / positive if positive > 1.0 else total
    metrics = ", ".join(f"{k}={v:g}" for k, v in trace.metrics.items() if v is not None)
    reason = f"v1 reward {total:g}" + (f" ({metrics})" if metrics else "")
    passed = positive > 0 and total >= positive
    return Grade.from_score(min(1.0, max(0.0, score)), passed=passed, reason=reason, checks=tuple(checks))


def load_v1_taskset(
    taskset: str,
    *,
    config: Mapping[str, Any] | None = None,
    limit: int | None = None,
    max_turns: int = 10,
) -> V1TasksetEnv:
    """The v1 taskset ``taskset`` (a module id, as ``vf-eval <taskset-id>`` takes it) built with
    ``config`` (its TasksetConfig's fields), its first ``limit`` tasks, as a verihub environment."""
    _v1()
    from verifiers.v1.utils.loaders import taskset_class, taskset_config_type

    try:
        cls = taskset_class(taskset)
    except (ModuleNotFoundError, AttributeError, TypeError, ValueError) as exc:
        raise UsageError(f"cannot load v1 taskset {taskset!r}: {exc}") from exc
    cfg = taskset_config_type(taskset).model_validate({**dict(config or {}), "id": taskset})
    ts = cls(cfg)
    if limit is not None:
        ts = ts.take(limit)
    return V1TasksetEnv(taskset, ts, max_turns=max_turns)


def load_environment(
    taskset: str,
    config: Mapping[str, Any] | None = None,
    limit: int | None = None,
    max_turns: int = 10,
) -> V1TasksetEnv:
    """Entry point ``verifiers-v1``: ``verihub eval verifiers-v1 --env-arg taskset=MODULE``."""
    return load_v1_taskset(taskset, config=config, limit=limit, max_turns=max_turns)
