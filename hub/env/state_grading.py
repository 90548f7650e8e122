"""What a stateful task requires, and grading a rollout against it.

A stateful task's ``answer`` is a :class:`StateRequirements` (stored as a plain dict):

- ``gold_actions``: the tool calls that solve the task, whose replay gives the expected state;
- ``check_state``: compare the rollout's final state with that state, table by table (the
  environment's volatile columns left out);
- ``required_actions`` / ``forbidden_actions``: calls that must (must not) have succeeded; a
  requirement's ``arguments`` must all be present with equal values (other arguments may differ);
- ``answer``: text the final answer must contain (case and spacing ignored), when asked;
- ``rule``: ``all`` (reward 1 only when every declared check passes) or ``mean`` (the fraction of
  declared checks that pass; passed only when all do).

A task must declare a state check or an action requirement: an answer alone is not a workflow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from graders.grade import Check, Grade
from hub.env.types import Message, Task, ToolCall

__all__ = [
    "Action",
    "StateRequirements",
    "action_matches",
    "executed_actions",
    "gold_messages",
    "grade_requirements",
    "requirements_of",
]

_SPACE = re.compile(r"\s+")


class Action(BaseModel):
    """One tool call: its name and its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class StateRequirements(BaseModel):
    """The reference of a stateful task (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    gold_actions: tuple[Action, ...] = Field(description="Tool calls that solve the task, in order.")
    check_state: bool = True
    required_actions: tuple[Action, ...] = ()
    forbidden_actions: tuple[Action, ...] = ()
    answer: str | None = Field(default=None, description="Text the final answer must contain.")
    rule: Literal["all", "mean"] = "all"

    @model_validator(mode="after")
    def _declares_a_requirement(self) -> StateRequirements:
        if not (self.check_state or self.required_actions or self.forbidden_actions):
            raise ValueError("a stateful task must check the final state or require/forbid actions")
        return self


def requirements_of(task: Task) -> StateRequirements | None:
    """The task's requirements, or None when its answer is not a stateful reference."""
    if not isinstance(task.answer, dict) or "gold_actions" not in task.answer:
        return None
    try:
        return StateRequirements.model_validate(task.answer)
    except ValidationError:
        return None


def _norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return repr(value)


def action_matches(done: Action, wanted: Action) -> bool:
    """``done`` is a call of ``wanted``'s tool with every argument ``wanted`` names, equal."""
    if done.name != wanted.name:
        return False
    return all(
        k in done.arguments and _norm(done.arguments[k]) == _norm(v) for k, v in wanted.arguments.items()
    )


def executed_actions(messages: Sequence[Message]) -> list[Action]:
    """The tool calls of a transcript that succeeded, in order: calls whose reply is not an
    error (a failed call changes nothing, so it is not replayed)."""
    replies = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool" and m.tool_call_id}
    out: list[Action] = []
    for m in messages:
        if m.role != "assistant" or not m.tool_calls:
            continue
        for call in m.tool_calls:
            reply = replies.get(call.id)
            if reply is None or reply.startswith("error"):
                continue
            try:
                args = json.loads(call.arguments or "{}")
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(args, dict):
                out.append(Action(name=call.name, arguments=args))
    return out


def gold_messages(
    task: Task,
    system_prompt: str | None,
    *,
    actions: Sequence[Action] | None = None,
    results: Sequence[str] | None = None,
) -> list[Message]:
    """A transcript performing ``actions`` (the task's gold actions by default), one call per
    assistant turn with ``results`` as the tool replies, then the final answer."""
    spec = requirements_of(task)
    if actions is None:
        actions = spec.gold_actions if spec is not None else ()
    messages = task.messages(system_prompt)
    for i, action in enumerate(actions):
        call = ToolCall(id=f"call_{i}", name=action.name, arguments=json.dumps(action.arguments))
        messages.append(Message(role="assistant", content=None, tool_calls=(call,)))
        reply = results[i] if results is not None and i < len(results) else "ok"
        messages.append(Message(role="tool", content=reply, tool_call_id=call.id, name=action.name))
    final = spec.answer if spec is not None and spec.answer else "Done."
    messages.append(Message(role="assistant", content=final))
    return messages


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def grade_requirements(
    spec: StateRequirements,
    *,
    actions: Sequence[Action],
    completion: str,
    state_equal: bool,
    state_diff: Sequence[str] = (),
) -> Grade:
    """Combine the declared checks by the task's rule."""
    checks: list[Check] = []

    def add(name: str, ok: bool, reason: str) -> None:
        checks.append(Check(name=name, score=1.0 if ok else 0.0, passed=ok, reason=reason[:300]))

    if spec.check_state:
        add(
            "state",
            state_equal,
            "final state matches the gold replay" if state_equal else "; ".join(state_diff),
        )
    if spec.required_actions:
        missing = [a.name for a in spec.required_actions if not any(action_matches(d, a) for d in actions)]
        add("required_actions", not missing, f"missing: {', '.join(missing)}" if missing else "all performed")
    if spec.forbidden_actions:
        done = [a.name for a in spec.forbidden_actions if any(action_matches(d, a) for d in actions)]
        add("forbidden_actions", not done, f"performed: {', '.join(done)}" if done else "none performed")
    if spec.answer is not None:
        ok = _squash(spec.answer) in _squash(completion)
        add("answer", ok, "answer given" if ok else f"the final answer lacks {spec.answer!r}")
    passed = all(c.passed for c in checks)
    score = (1.0 if passed else 0.0) if spec.rule == "all" else sum(c.score for c in checks) / len(checks)
    failed = [c.name for c in checks if not c.passed]
    reason = "every requirement met" if passed else "failed: " + ", ".join(failed)
    return Grade.from_score(score, passed=passed, reason=reason, checks=tuple(checks))
