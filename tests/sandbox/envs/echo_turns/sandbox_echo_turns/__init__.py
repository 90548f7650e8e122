"""Fixture: a multi-turn environment that keeps per-rollout data in its State (in the sandbox)
and overrides reset and step, so the proxy must forward both."""

from __future__ import annotations

from graders.exact import ExactGrader
from hub import Message, MultiTurnEnv, State, Step, Task


class EchoTurns(MultiTurnEnv):
    max_turns = 3

    async def reset(self, task: Task) -> State:
        state = await super().reset(task)
        state.data["asked"] = 0
        return state

    async def step(self, state: State, action: Message) -> Step:
        state.data["asked"] += 1
        if state.data["asked"] == 1:
            return Step(messages=(Message(role="user", content="Are you sure? Say it again."),))
        return Step(terminated=True, info={"asked": state.data["asked"]})


def load_environment() -> EchoTurns:
    tasks = [Task(id=f"t{i}", prompt=f"What is {i} + 1?", answer=str(i + 1)) for i in range(6)]
    return EchoTurns(tasks=tasks, grader=ExactGrader(kind="number"))
