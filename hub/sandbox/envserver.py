"""The program inside the sandbox that serves one environment (``python -m hub.sandbox.envserver``).

It answers requests on file descriptor 3 (see :mod:`hub.sandbox.channel`) and never speaks
first. ``verihub eval --sandbox`` and ``verihub check`` start it the same way, with the same
mounts, environment variables, working directory and host name, and ask it the same kinds of
questions: ``load``, ``tasks``, ``num_tasks``, ``reset``, ``step``, ``release``, ``grade``,
``gold_response``, ``render_answer``, ``tripwire`` and ``aclose``. Tasks, messages, steps and
grades cross as JSON; the server keeps its own task objects and per-rollout states and refers
to a state by a number.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import distributions
from typing import Any

from hub.sandbox.channel import serve
from hub.sandbox.process import CHANNEL_FD
from hub.sandbox.tripwire import Tripwire

__all__ = ["PACKAGE_DIR", "main"]

# where the staged package is bound, read-only (a plain folder in --unsafe-no-sandbox mode)
PACKAGE_DIR = os.environ.get("VERIHUB_SANDBOX_PACKAGE", "/opt/verihub/env")


class _Server:
    def __init__(self, tripwire: Tripwire) -> None:
        self.env: Any = None
        self.wire = tripwire
        self.tasks_by_id: dict[str, tuple[Mapping[str, Any], Any]] = {}
        self.iters: dict[tuple[str, int], tuple[int, Iterator[Any]]] = {}
        self.states: dict[int, Any] = {}
        self.next_state = itertools.count(1)

    def handlers(self) -> dict[str, Any]:
        names = ("load", "tasks", "num_tasks", "reset", "step", "release", "grade")
        more = ("gold_response", "render_answer", "tripwire", "aclose")
        return {n: getattr(self, n) for n in (*names, *more)}

    # -- loading -----------------------------------------------------------------------------
    async def load(self, p: Mapping[str, Any]) -> dict[str, Any]:
        from hub.env import Environment, recording_sources

        self.wire.phase = "load"
        env_id = p.get("env_id")
        found = [
            ep
            for dist in distributions(path=[PACKAGE_DIR])
            for ep in dist.entry_points
            if ep.group == "verihub.environments" and (env_id is None or ep.name == env_id)
        ]
        if not found:
            raise LookupError("no verihub.environments entry point found in the package")
        ep = found[0]
        with recording_sources() as sources:  # datasets the package loads, reported with the info
            env = ep.load()(**dict(p.get("env_args") or {}))
        if not isinstance(env, Environment):
            raise TypeError(f"load_environment returned {type(env).__name__}, not a verihub Environment")
        env.id = ep.name
        if ep.dist is not None:
            env.version = ep.dist.version
        self.env = env
        cls = type(env)
        return {
            "id": env.id,
            "version": env.version,
            "repr": repr(env)[:200],
            "splits": list(env.splits),
            "system_prompt": env.system_prompt,
            "max_turns": env.max_turns,
            "tool_schemas": env.tool_schemas(),
            "overrides": {
                "reset": cls.reset is not Environment.reset,
                "step": cls.step is not Environment.step,
            },
            "hooks": [h for h in ("gold_response", "render_answer") if callable(getattr(env, h, None))],
            "data": sources[:50],
        }

    # -- tasks -------------------------------------------------------------------------------
    def _task(self, data: Mapping[str, Any]) -> Any:
        """The server's own task object for ``data`` (the one the environment made)."""
        from hub.env import Task

        known = self.tasks_by_id.get(str(data.get("id")))
        if known is not None and known[0] == data:
            return known[1]
        return Task.model_validate(data)

    async def tasks(self, p: Mapping[str, Any]) -> list[dict[str, Any]]:
        split, seed, start, count = str(p["split"]), int(p["seed"]), int(p["start"]), int(p["count"])
        self.wire.phase = f"tasks {split}"
        pos, it = self.iters.get((split, seed), (0, iter(())))
        if pos != start or (split, seed) not in self.iters:
            it, pos = iter(self.env.tasks(split, seed=seed)), 0
            it = itertools.islice(it, start, None)
            pos = start
        out = []
        for task in itertools.islice(it, count):
            data = task.model_dump(mode="json")
            self.tasks_by_id[task.id] = (data, task)
            out.append(data)
        self.iters[(split, seed)] = (pos + len(out), it)
        return out

    async def num_tasks(self, p: Mapping[str, Any]) -> int | None:
        n = self.env.num_tasks(str(p["split"]))
        return None if n is None else int(n)

    # -- rollouts ----------------------------------------------------------------------------
    async def reset(self, p: Mapping[str, Any]) -> dict[str, Any]:
        state = await self.env.reset(self._task(p["task"]))
        handle = next(self.next_state)
        self.states[handle] = state
        return {"state": handle, "messages": [m.model_dump(mode="json") for m in state.messages]}

    async def step(self, p: Mapping[str, Any]) -> dict[str, Any]:
        from hub.env import Message

        state = self.states[int(p["state"])]
        state.messages[:] = [Message.model_validate(m) for m in p["messages"]]
        state.turn = int(p["turn"])
        step = await self.env.step(state, Message.model_validate(p["action"]))
        return {
            "messages": [m.model_dump(mode="json") for m in step.messages],
            "terminated": bool(step.terminated),
            "truncated": bool(step.truncated),
            "info": step.info,
        }

    async def release(self, p: Mapping[str, Any]) -> None:
        self.states.pop(int(p["state"]), None)

    async def grade(self, p: Mapping[str, Any]) -> dict[str, Any]:
        from hub.env import Rollout

        self.wire.phase = f"grading {p['task'].get('id')}"
        grade = await self.env.grade(self._task(p["task"]), Rollout.model_validate(p["rollout"]))
        return dict(grade.model_dump(mode="json"))

    async def gold_response(self, p: Mapping[str, Any]) -> str | None:
        value = self.env.gold_response(self._task(p["task"]))
        return None if value is None else str(value)

    async def render_answer(self, p: Mapping[str, Any]) -> str:
        return str(self.env.render_answer(p["answer"]))

    async def tripwire(self, p: Mapping[str, Any]) -> list[dict[str, str]]:
        return self.wire.drain()

    async def aclose(self, p: Mapping[str, Any]) -> None:
        if self.env is not None:
            await self.env.aclose()


def main() -> None:
    import graders
    import hub
    import hub.env  # noqa: F401  (the core is imported before the tripwire is armed)

    sys.path.insert(0, PACKAGE_DIR)
    code = [os.path.dirname(os.path.realpath(str(m.__file__))) for m in (hub, graders)]
    read = [PACKAGE_DIR, *code, *json.loads(os.environ.get("VERIHUB_SANDBOX_READ", "[]"))]
    tripwire = Tripwire(read=read, write=[os.environ.get("HOME", "/")], trusted=code)
    server = _Server(tripwire)
    tripwire.install()
    # what the environment prints must not reach the channel: stdout goes to stderr
    os.dup2(2, 1)
    asyncio.run(serve(CHANNEL_FD, server.handlers()))
    os._exit(0)


if __name__ == "__main__":
    main()
