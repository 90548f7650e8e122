"""``McpToolEnv``: tools from an MCP server started per rollout, with verihub's limits."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from graders.exact import ExactGrader  # noqa: E402
from hub.env import Message, State, Task, ToolCall  # noqa: E402
from hub.env.mcp_tools import McpToolEnv  # noqa: E402

SERVER = str(Path(__file__).with_name("mcp_counter_server.py"))


def call(name: str, args: object, i: int = 0) -> Message:
    text = args if isinstance(args, str) else json.dumps(args)
    return Message(role="assistant", tool_calls=(ToolCall(id=f"c{i}", name=name, arguments=text),))


async def reply(env: McpToolEnv, state: State, name: str, args: object) -> str:
    return (await env.step(state, call(name, args))).messages[0].content or ""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
async def test_each_rollout_gets_its_own_server_with_verihubs_limits() -> None:
    env = McpToolEnv(
        command=[sys.executable, SERVER],
        tasks=[Task(id="t", prompt="count", answer="2")],
        grader=ExactGrader(),
        tool_timeout_s=2.0,
    )
    assert {s["function"]["name"] for s in env.tool_schemas() or []} == {"bump", "nap", "pid"}
    task = next(iter(env.tasks()))
    a, b = await env.reset(task), await env.reset(task)
    assert await reply(env, a, "bump", {"by": 2}) == "2"
    assert await reply(env, a, "bump", {"by": 3}) == "5"
    assert await reply(env, b, "bump", {"by": 1}) == "1"  # another rollout, another process
    assert (await reply(env, a, "bump", {"by": "many"})).startswith("error: invalid arguments: by")
    assert (await reply(env, a, "bump", "x" * 70_000)).startswith("error: arguments longer")
    assert (await reply(env, a, "nope", {})).startswith("error: unknown tool")
    pid_b = int(await reply(env, b, "pid", {}))
    late = await reply(env, b, "nap", {"seconds": 30})
    assert late.startswith("error: tool nap timed out")
    assert (await reply(env, b, "bump", {"by": 1})).startswith("error: the tool server has stopped")
    pid_a = int(await reply(env, a, "pid", {}))
    done = await env.step(a, Message(role="assistant", content="5"))
    assert done.terminated
    for _ in range(300):  # the processes end once their sessions close
        if _gone(pid_a) and _gone(pid_b):
            break
        await asyncio.sleep(0.02)
    assert _gone(pid_a) and _gone(pid_b)
    await env.aclose()
    assert env.live_sessions() == 0
