"""Adapters between verihub and the ``verifiers`` library's classic API (0.3.x).

(Over 400 lines on purpose: both directions share the message conversion, the API detection and
the grade mapping; split apart they would have to export those private helpers to each other.
verifiers 0.4's v1 API lives in :mod:`hub.train.verifiers_v1` and :mod:`hub.train.v1_taskset`.)

- verifiers in verihub: :class:`VerifiersEnv` (or :func:`load_verifiers_env`) wraps a classic
  ``vf.SingleTurnEnv``/``vf.MultiTurnEnv`` as a verihub environment. ``grade`` replays the
  transcript to rebuild the verifiers state (so an ``env_response`` with side effects runs
  twice) and scores it with the rubric, each reward function a weighted sub-check; one that
  raises is a grader error (verifiers itself would score 0).
- verihub in verifiers: :func:`to_verifiers` gives a verifiers environment whose rubric calls the
  verihub environment's ``grade``. Usage and what is refused: docs/training.md, "verifiers 0.3.x".
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import logging
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from graders.grade import Check, Grade
from hub.env import Environment, Message, Rollout, State, Step, Task, Timing, UsageError, grade_rollout

__all__ = [
    "SUPPORTED_VERIFIERS",
    "VF_ENV_MODULE",
    "VerifiersEnv",
    "installed_api",
    "load_verifiers_env",
    "to_verifiers",
]

SUPPORTED_VERIFIERS = "0.3.1"
#: the module verifiers 0.3.x imports to (re)build an environment made by :func:`to_verifiers`
VF_ENV_MODULE = "hub.train.verifiers_env"
logger = logging.getLogger("verihub.interop")
_ROLES = ("system", "user", "assistant", "tool")


def installed_api() -> tuple[str, str]:
    """Which verifiers API is installed: ``("classic", version)`` for 0.3.x (``vf.SingleTurnEnv``,
    ``vf.Rubric``), ``("v1", version)`` for 0.4.x (``verifiers.v1`` only), ``("none", "")``."""
    try:
        spec = importlib.util.find_spec("verifiers")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "none", ""
    try:
        version = importlib.metadata.version("verifiers")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    import verifiers

    if hasattr(verifiers, "MultiTurnEnv") and hasattr(verifiers, "Rubric"):
        return "classic", version
    return "v1", version


def _vf() -> Any:
    """The classic verifiers API (0.3.x), or a one-line error naming what is installed instead."""
    api, version = installed_api()
    if api == "none":
        raise UsageError(
            "the classic verifiers adapter needs verifiers 0.3.x: "
            "`pip install 'verihub[verifiers-legacy]'` (verifiers 0.4.x environments load with "
            "hub.train.verifiers_v1)"
        )
    if api == "v1":
        raise UsageError(
            f"verifiers {version} is installed, which has only the verifiers.v1 API (Taskset, Harness); "
            "this adapter serves the classic API of verifiers 0.3.x (vf.SingleTurnEnv, vf.MultiTurnEnv, "
            "vf.Rubric): `pip install 'verihub[verifiers-legacy]'` for it, or load v1 tasksets with "
            "hub.train.verifiers_v1"
        )
    import verifiers

    if not version.startswith(SUPPORTED_VERIFIERS.rsplit(".", 1)[0] + "."):
        warnings.warn(
            f"verihub's classic verifiers adapter is tested with verifiers=={SUPPORTED_VERIFIERS}; "
            f"found {version}",
            stacklevel=3,
        )
    return verifiers


# -- message conversion ------------------------------------------------------------------------
def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for p in content:
            text = p.get("text") if hasattr(p, "get") else None
            if text:
                parts.append(str(text))
        return "".join(parts)
    return str(content)


def _to_hub(msg: Any) -> Message | None:
    """A verifiers message (dict or its pydantic message) as a verihub Message (text only)."""
    role = msg.get("role")
    if role not in _ROLES:
        return None
    return Message(role=role, content=_text(msg.get("content")), tool_call_id=msg.get("tool_call_id"))


def _to_hub_list(msgs: Iterable[Any]) -> list[Message]:
    return [m for m in (_to_hub(x) for x in msgs) if m is not None]


def _to_vf_dicts(msgs: Iterable[Message]) -> list[dict[str, Any]]:
    out = []
    for m in msgs:
        d: dict[str, Any] = {"role": m.role, "content": m.content or ""}
        if m.role == "tool" and m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


def _normalize(msgs: Iterable[Message]) -> Any:
    from verifiers.utils.message_utils import normalize_messages

    return normalize_messages(_to_vf_dicts(msgs), field_name="messages")


# -- direction 1: a verifiers environment in verihub -------------------------------------------
class VerifiersEnv(Environment):
    """A verihub environment that runs a verifiers (0.3.x classic API) environment.

    ``vf_env``: the object a verifiers ``load_environment()`` returns. ``max_turns``: the turn
    limit for verihub's runner when the verifiers environment has none (``max_turns=-1``).
    """

    def __init__(
        self,
        vf_env: Any,
        *,
        id: str | None = None,
        version: str | None = None,
        max_turns: int | None = None,
    ) -> None:
        vf = _vf()
        if not isinstance(vf_env, vf.MultiTurnEnv):
            raise UsageError(
                f"{type(vf_env).__name__} is not a verifiers SingleTurnEnv/MultiTurnEnv "
                "(the only kinds the adapter supports)"
            )
        vf_turns = int(getattr(vf_env, "max_turns", -1))
        turns = max_turns if max_turns is not None else (vf_turns if vf_turns > 0 else 10)
        super().__init__(id=id or vf_env.env_id or "verifiers", version=version, max_turns=turns)
        self.vf_env = vf_env
        self._tasks: dict[str, list[Task]] = {}
        from verifiers.types import ClientConfig

        # verifiers states need a client; verihub's runner makes the model calls, so this one
        # (pointed at an unused local port) is never called.
        self._client = vf.clients.resolve_client(
            ClientConfig(api_base_url="http://127.0.0.1:9/v1", api_key_var="VERIHUB_UNUSED_KEY")
        )

    @property
    def splits(self) -> tuple[str, ...]:
        return ("train", "test")

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        if split not in self.splits:
            from hub.env import UnknownSplitError

            raise UnknownSplitError(split, self.splits)
        if split not in self._tasks:
            ds = self.vf_env.get_dataset() if split == "train" else self.vf_env.get_eval_dataset()
            self._tasks[split] = [self._task(row) for row in ds]
        return self._tasks[split]

    def _task(self, row: Mapping[str, Any]) -> Task:
        data = to_jsonable_python(dict(row))
        task_id = str(row.get("src_id", row["example_id"]))
        return Task(
            id=task_id,
            prompt=tuple(_to_hub_list(row["prompt"])),
            answer=data.get("answer"),
            metadata={"verifiers_input": data},
        )

    async def _vf_state(self, task: Task) -> Any:
        vf_state = await self.vf_env.init_state(
            dict(task.metadata["verifiers_input"]), client=self._client, model="verihub"
        )
        new = await self.vf_env.setup_state(vf_state)
        return new if new is not None else vf_state

    async def reset(self, task: Task) -> State:
        return State(task=task, messages=task.messages(None), data={"vf_state": await self._vf_state(task)})

    async def step(self, state: State, action: Message) -> Step:
        vf_state = state.data["vf_state"]
        return await self._advance(vf_state, state.messages)

    async def _advance(self, vf_state: Any, messages: list[Message]) -> Step:
        """Record the last assistant turn; end, or get the environment's reply."""
        await self.vf_env.add_trajectory_step(
            vf_state,
            {
                "prompt": _normalize(messages[:-1]),
                "completion": _normalize(messages[-1:]),
                "response": None,
                "tokens": None,
                "reward": None,
                "advantage": None,
                "is_truncated": False,
                "trajectory_id": vf_state.get("trajectory_id") or uuid.uuid4().hex,
                "extras": {},
            },
        )
        if await self.vf_env.is_completed(vf_state):
            return Step(terminated=True, info={"stop_condition": vf_state.get("stop_condition")})
        reply = await self.vf_env.env_response(_normalize(messages), vf_state)
        out = tuple(_to_hub_list(reply or []))
        final = vf_state.get("final_env_response")
        if final is not None:
            return Step(messages=tuple(_to_hub_list(final)) or out, terminated=True)
        done = await self.vf_env.is_completed(vf_state)
        return Step(messages=out, terminated=done)

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        vf_state = await self._vf_state(task)
        n_prompt = len(task.messages(None))
        msgs = rollout.messages
        turns = [i for i, m in enumerate(msgs) if m.role == "assistant" and i >= n_prompt]
        for i in turns:  # replay each step: the verifiers state as the live run left it
            await self._advance(vf_state, msgs[: i + 1])
        vf_state["completion"] = _normalize(msgs[n_prompt:])
        vf_state["is_completed"] = True
        return await _score(self.vf_env, vf_state)


async def _call(func: Any, objects: Mapping[str, Any]) -> Any:
    import inspect

    sig = inspect.signature(func)
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        args = dict(objects)
    else:
        args = {k: v for k, v in objects.items() if k in sig.parameters}
    result = func(**args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _score(vf_env: Any, vf_state: Any) -> Grade:
    """Score with the rubric's functions (exceptions propagate: a crash is a grader error)."""
    rubric = vf_env.rubric
    rubrics = list(getattr(rubric, "rubrics", None) or [rubric])
    reward = 0.0
    positive = 0.0
    checks: list[Check] = []
    metrics: dict[str, float] = {}
    threshold = float(getattr(vf_env, "pass_threshold", 0.5))
    for rb in rubrics:
        for func, weight in zip(rb.funcs, rb.weights, strict=True):
            name = getattr(func, "__name__", type(func).__name__)
            if rb._is_group_func(func):
                value = (await _call(func, rb.group_score_objects([vf_state])))[0]
            else:
                value = await _call(func, rb.score_objects(vf_state))
            value = float(value)
            reward += value * weight
            metrics[name] = value
            if weight > 0:
                positive += weight
                clamped = min(1.0, max(0.0, value))
                checks.append(
                    Check(
                        name=name,
                        score=clamped,
                        weight=float(weight),
                        passed=value >= threshold,
                        reason=f"{value:g}",
                    )
                )
    score = reward / positive if positive > 1.0 else reward
    vf_state["reward"], vf_state["metrics"] = reward, metrics
    extra = ", ".join(f"{k}={v:g}" for k, v in metrics.items())
    return Grade.from_score(
        min(1.0, max(0.0, score)),
        passed=reward >= threshold,
        reason=f"verifiers reward {reward:g} ({extra})",
        checks=tuple(checks),
    )


def load_verifiers_env(module: str, **kwargs: Any) -> VerifiersEnv:
    """Import ``module`` (a verifiers environment package), call its ``load_environment(**kwargs)``
    and wrap the result in a :class:`VerifiersEnv`."""
    _vf()
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(
            f"cannot import verifiers environment module {module!r}: {exc}; pip install it"
        ) from exc
    factory = getattr(mod, "load_environment", None)
    if factory is None:
        raise UsageError(f"{module} has no load_environment(); it is not a verifiers environment")
    return VerifiersEnv(factory(**kwargs), id=module)


# -- direction 2: a verihub environment in verifiers -------------------------------------------
def to_verifiers(
    env: Environment | str,
    *,
    split: str = "train",
    n: int | None = None,
    seed: int = 0,
    grade_timeout_s: float = 60.0,
    error_value: float = 0.0,
    env_args: Mapping[str, Any] | None = None,
) -> Any:
    """A verifiers ``MultiTurnEnv`` serving ``env``'s first ``n`` tasks of ``split``.

    ``env``: a verihub environment, or the id of an installed one (built with ``env_args``).
    Its rubric has one reward function, ``verihub_reward`` (the verihub grade's score; a grader
    error or timeout scores ``error_value``, is logged and counted in ``state["verihub_grade"]``)
    and one metric, ``verihub_passed``. The dataset (used for both train and eval) has columns
    ``prompt``, ``answer`` (JSON) and ``info`` (JSON: task id and metadata).

    The verifiers environment's ``env_id`` is :data:`VF_ENV_MODULE` and its ``env_args`` name the
    verihub environment: verifiers' env-server workers (``vf-eval``'s default) rebuild it by
    importing that module and calling its ``load_environment(**env_args)``, which needs ``env``
    to be an installed verihub environment (``verihub list``); an environment object made in
    code runs with ``vf_env.evaluate`` or ``vf-eval --disable-env-server`` only.
    """
    from datasets import Dataset

    from hub.env import select_tasks

    vf = _vf()
    build_args = dict(env_args or {})
    if isinstance(env, str):
        from hub.registry import load_environment

        env = load_environment(env, **build_args)
    target: Environment = env  # the closures below see this name, narrowed
    if split not in env.splits:
        raise UsageError(f"{env.id} has no split {split!r}; it has: {', '.join(env.splits)}")
    tasks = select_tasks(env, split=split, seed=seed, num_tasks=n)
    rows = [
        {
            "prompt": _to_vf_dicts(t.messages(env.system_prompt)),
            "answer": json.dumps(to_jsonable_python(t.answer)),
            "info": json.dumps({"task_id": t.id, "metadata": to_jsonable_python(t.metadata)}),
        }
        for t in tasks
    ]
    dataset = Dataset.from_list(rows)

    def task_of(state: Any) -> Task:
        info = state.get("info") or {}
        if isinstance(info, str):
            info = json.loads(info)
        prompt = _to_hub_list(state["prompt"])
        return Task(
            id=str(info.get("task_id")),
            prompt=tuple(prompt),
            answer=json.loads(state.get("answer") or "null"),
            metadata=dict(info.get("metadata") or {}),
        )

    async def verihub_reward(state: Any, **_: Any) -> float:
        task = task_of(state)
        messages = _to_hub_list([*state["prompt"], *(state.get("completion") or [])])
        completion = next((m.content or "" for m in reversed(messages) if m.role == "assistant"), "")
        rollout = Rollout(
            task_id=task.id,
            rollout_index=0,
            messages=messages,
            completion=completion,
            timing=Timing(started_at=time.time()),
            turns=sum(m.role == "assistant" for m in messages),
        )
        grade = await grade_rollout(target, task, rollout, timeout_s=grade_timeout_s)
        state["verihub_grade"] = grade.model_dump(mode="json")
        if grade.is_error:
            logger.warning("verihub grader %s on task %s: %s", grade.status, task.id, grade.reason)
            return error_value
        return grade.score

    async def verihub_passed(state: Any, **_: Any) -> float:
        grade = state.get("verihub_grade") or {}
        return 1.0 if grade.get("passed") else 0.0

    base: Any = vf.MultiTurnEnv

    class VerihubVfEnv(base):  # type: ignore[misc]
        """A verifiers environment serving a verihub environment (see :func:`to_verifiers`)."""

        async def setup_state(self, state: Any) -> Any:
            task = task_of(state)
            state["verihub_state"] = await target.reset(task)
            return state

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            vh_state: State = state["verihub_state"]
            vh_state.messages = _to_hub_list(messages)
            action = next((m for m in reversed(vh_state.messages) if m.role == "assistant"), None)
            if action is None:
                raise UsageError("env_response called before the model answered")
            vh_state.turn += 1
            step = await target.step(vh_state, action)
            out = _to_vf_dicts(step.messages)
            if step.terminated or step.truncated:
                state["final_env_response"] = out
            return out

    rubric = vf.Rubric(funcs=[verihub_reward, verihub_passed], weights=[1.0, 0.0])
    return VerihubVfEnv(
        dataset=dataset,
        eval_dataset=dataset,
        rubric=rubric,
        max_turns=env.max_turns,
        env_id=VF_ENV_MODULE,
        env_args={
            "env": env.id,
            "env_args": build_args,
            "split": split,
            "n": n,
            "seed": seed,
            "grade_timeout_s": grade_timeout_s,
            "error_value": error_value,
        },
    )
