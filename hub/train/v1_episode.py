"""Multi-turn verihub environments under verifiers 0.4.x (``verifiers.v1``): the episode loop.

verifiers 0.4's v1 API has no "environment response" hook on a taskset: a conversation is an
``Env`` whose ``run(task, agents)`` plays the user through ``agent.interaction(task)``. vf-eval
takes a taskset package's exported ``Env``, so :mod:`verihub_v1` exports :class:`VerihubEnv`
beside the taskset.

``VerihubEnv.run`` drives the environment's own ``reset`` and ``step``: every model reply goes to
``step``, whose messages become the next user turn, until the step ends, ``max_turns`` is reached
or the harness stops; then ``verihub_reward`` grades the whole transcript. A single-turn
environment runs as ``SingleAgentEnv`` does; in a :class:`hub.env.tools.ToolEnv` the harness's own
tool loop calls the tools within one turn. The harness must be able to host a user (``null``,
``bash``). In full: docs/training.md, "verifiers 0.4.x (v1)".
"""

from __future__ import annotations

import importlib
from typing import Any

from hub.env import Message, State
from hub.train.v1_taskset import VerihubTask, _environment, hub_task

__all__ = ["VerihubEnv"]

vf: Any = importlib.import_module("verifiers.v1")


def _user_turn(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The environment's reply as the next v1 turn: tool results and system notes are given to
    the model as user text (a v1 user turn carries user messages)."""
    text = "\n\n".join(m.content or "" for m in messages if m.content)
    return [{"role": "user", "content": text}]


class VerihubEnv(vf.SingleAgentEnv):  # type: ignore[misc]
    """The ``agent`` seat (``--env.agent.*``) playing a verihub environment, multi-turn when the
    environment is (see the module doc)."""

    async def run(self, task: Any, agents: Any) -> None:
        if not isinstance(task, VerihubTask):
            await super().run(task, agents)
            return
        data = task.data
        env = _environment(data.verihub_env, data.verihub_env_args)
        if env.max_turns <= 1:
            await super().run(task, agents)
            return
        state: State = await env.reset(hub_task(data))
        async with agents.agent.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                state.turn += 1
                reply = Message(role="assistant", content=segment.last_reply)
                state.messages.append(reply)
                step = await env.step(state, reply)
                state.messages.extend(step.messages)
                if step.terminated or step.truncated or state.turn >= env.max_turns:
                    break
                if not step.messages:
                    break  # nothing to say back: the exchange is over
                segment = await interaction.turn(_user_turn(step.messages))
            interaction.trace.info["verihub_turns"] = state.turn
