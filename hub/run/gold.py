"""``--model gold``: a built-in policy that performs each task's gold actions through the real tools.

For tasks whose answer is a :class:`~hub.env.state_grading.StateRequirements`, the policy finds
the task from the rollout's opening messages and answers with the next gold action as a tool
call (one per turn), then with the task's answer text. No network, no randomness: every
rollout of a sound environment earns 1.0, and the run directory holds real trajectories (tool
calls interleaved with the tools' results) for ``verihub export``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from hub.env import Message, Sampling, StateRequirements, Task, ToolCall, Usage, UsageError, requirements_of
from hub.run.completions import Completion

__all__ = ["GOLD_MODEL", "GoldClient", "is_gold_model"]

GOLD_MODEL = "gold"


def is_gold_model(model: str) -> bool:
    return model == GOLD_MODEL


def _key(messages: Sequence[Message]) -> str:
    return json.dumps([[m.role, m.content] for m in messages])


def _opening(messages: Sequence[Message]) -> list[Message]:
    out: list[Message] = []
    for m in messages:
        if m.role == "assistant":
            break
        out.append(m)
    return out


class GoldClient:
    """A chat client that replays gold actions (see the module docstring)."""

    def __init__(self, tasks: Iterable[Task], system_prompt: str | None) -> None:
        self._plans: dict[str, StateRequirements] = {}
        for task in tasks:
            spec = requirements_of(task)
            if spec is not None:
                self._plans[_key(task.messages(system_prompt))] = spec
        if not self._plans:
            raise UsageError("--model gold needs tasks with gold actions (a stateful tool environment)")

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling,
        tools: list[dict[str, Any]] | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        logprobs: bool = False,
    ) -> Completion:
        spec = self._plans.get(_key(_opening(messages)))
        if spec is None:
            message = Message(role="assistant", content="(gold: this task has no gold actions)")
            return Completion(message=message, usage=Usage(), finish_reason="stop")
        step = sum(1 for m in messages if m.role == "assistant")
        if step < len(spec.gold_actions):
            action = spec.gold_actions[step]
            call = ToolCall(id=f"gold_{step}", name=action.name, arguments=json.dumps(action.arguments))
            message = Message(role="assistant", content=None, tool_calls=(call,))
            return Completion(message=message, usage=Usage(), finish_reason="tool_calls")
        message = Message(role="assistant", content=spec.answer or "Done.")
        return Completion(message=message, usage=Usage(), finish_reason="stop")

    async def aclose(self) -> None:
        return None
