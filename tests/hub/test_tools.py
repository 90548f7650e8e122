"""Tools as typed Python functions, in the OpenAI tools format; hostile arguments."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import Message, Task, ToolCall, ToolEnv, tool_schema
from hub.env.errors import EnvironmentDefinitionError
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer, tool_call_reply
from hub.run.rundir import RunDir
from hub.run.runner import Runner
from tests.conftest import make_config


def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Longer text that is not part of the description.
    """
    return a + b


async def slow(x: str) -> str:
    """Sleep forever."""
    await asyncio.sleep(3600)
    return x


def boom() -> str:
    """Fail."""
    raise ValueError("nope")


def test_schema_from_signature() -> None:
    s = tool_schema(add)
    assert s["type"] == "function"
    fn = s["function"]
    assert fn["name"] == "add" and fn["description"] == "Add two integers."
    assert fn["parameters"]["properties"] == {
        "a": {"type": "integer"},
        "b": {"default": 0, "type": "integer"},
    }
    assert fn["parameters"]["required"] == ["a"]


def test_untyped_tool_is_rejected() -> None:
    def bad(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(EnvironmentDefinitionError, match="type hint"):
        tool_schema(bad)


async def test_calls_and_hostile_arguments() -> None:
    env = ToolEnv(
        tools=[add, slow, boom],
        tasks=[Task(id="t", prompt="p", answer="5")],
        grader=ExactGrader(),
        tool_timeout_s=0.1,
    )
    state = await env.reset(Task(id="t", prompt="p", answer="5"))
    calls = (
        ToolCall(id="1", name="add", arguments='{"a": 2, "b": 3}'),
        ToolCall(id="2", name="add", arguments='{"a": "two"}'),
        ToolCall(id="3", name="add", arguments="not json"),
        ToolCall(id="4", name="add", arguments='{"a": 1, "b": 2' + " " * 70_000 + "}"),
        ToolCall(id="5", name="rm_rf", arguments="{}"),
        ToolCall(id="6", name="slow", arguments='{"x": "y"}'),
        ToolCall(id="7", name="boom", arguments="{}"),
        ToolCall(id="8", name="add", arguments="[1, 2]"),
    )
    step = await env.step(state, Message(role="assistant", tool_calls=calls))
    assert not step.terminated
    out = {m.tool_call_id: m.content or "" for m in step.messages}
    assert out["1"] == "5"
    assert out["2"].startswith("error: invalid arguments: a")
    assert "not valid JSON" in out["3"]
    assert "longer than" in out["4"]
    assert "unknown tool 'rm_rf'" in out["5"]
    assert "timed out" in out["6"]
    assert out["7"] == "error: ValueError: nope"
    assert "JSON object" in out["8"]
    assert all(m.role == "tool" for m in step.messages)
    final = await env.step(state, Message(role="assistant", content="Answer: 5"))
    assert final.terminated
    assert env.tool_schemas() is not None and len(env.tool_schemas() or []) == 3


def sleepy(seconds: float) -> str:
    """Block the calling thread."""
    time.sleep(seconds)
    return "woke up"


async def test_sync_tool_past_its_timeout_answers_promptly() -> None:
    """A blocking tool runs off the event loop: the model gets the timeout error on time."""
    task = Task(id="t", prompt="p", answer="5")
    env = ToolEnv(tools=[sleepy], tasks=[task], grader=ExactGrader(), tool_timeout_s=0.2)
    state = await env.reset(task)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    background = asyncio.ensure_future(ticker())
    call = ToolCall(id="1", name="sleepy", arguments='{"seconds": 3}')
    step = await env.step(state, Message(role="assistant", tool_calls=(call,)))
    background.cancel()
    assert step.messages[0].content == "error: tool sleepy timed out after 0.2s"
    assert ticks >= 3  # the event loop kept running meanwhile
    quick = ToolCall(id="2", name="sleepy", arguments='{"seconds": 0}')
    step = await env.step(state, Message(role="assistant", tool_calls=(quick,)))
    assert step.messages[0].content == "woke up"


async def test_tool_env_end_to_end_over_http(tmp_path: Path) -> None:
    """Tools go out in the request, tool calls come back through the real client and runner."""
    requests: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> str | dict[str, Any]:
        requests.append(request)
        last = request["messages"][-1]
        if last["role"] == "tool":
            return f"Answer: {last['content']}"
        return tool_call_reply("add", {"a": 2, "b": 3}, call_id="call_7")

    task = Task(id="t0", prompt="What is 2 + 3? Use the add tool.", answer="5")
    env = ToolEnv(id="tooly", tools=[add], tasks=[task], grader=ExactGrader(), max_turns=4)
    config = make_config("tooly", num_tasks=1, rollouts=1, max_turns=4)
    rd = RunDir(tmp_path)
    rd.create(config)
    async with FakeChatServer(responder=responder) as srv:
        async with OpenAIClient(ClientOptions(base_url=srv.base_url, model="fake")) as client:
            await Runner(env=env, client=client, config=config, rundir=rd).run([task])
    assert len(requests) == 2
    assert requests[0]["tools"] == [tool_schema(add)]
    (r,) = rd.iter_rollouts()
    assert [m.role for m in r.messages] == ["user", "assistant", "tool", "assistant"]
    call = (r.messages[1].tool_calls or ())[0]
    assert (call.id, call.name, json.loads(call.arguments)) == ("call_7", "add", {"a": 2, "b": 3})
    assert r.messages[2].content == "5" and r.messages[2].tool_call_id == "call_7"
    second = requests[1]["messages"]
    assert second[1]["tool_calls"][0]["function"]["name"] == "add"
    assert second[2] == {"role": "tool", "content": "5", "tool_call_id": "call_7", "name": "add"}
    assert r.turns == 2 and r.error is None and r.passed and r.reward == 1.0


async def test_arguments_nested_past_the_parser_depth_are_an_error_for_the_model() -> None:
    """'[[[[...' within the size limit makes json.loads raise RecursionError, not a decode error."""
    task = Task(id="t", prompt="p", answer="5")
    env = ToolEnv(tools=[add], tasks=[task], grader=ExactGrader())
    state = await env.reset(task)
    calls = (
        ToolCall(id="1", name="add", arguments="[" * 60_000),
        ToolCall(id="2", name="add", arguments='{"a": ' + "[" * 30_000 + "]" * 30_000 + "}"),
    )
    step = await env.step(state, Message(role="assistant", tool_calls=calls))
    assert [m.content for m in step.messages] == ["error: arguments are nested too deeply"] * 2


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def raises_unprintable() -> str:
    """Fail badly."""
    raise Unprintable()


def circular() -> list[Any]:
    """Return what JSON cannot hold."""
    out: list[Any] = []
    out.append(out)
    return out


async def test_tool_bugs_come_back_as_errors_not_exceptions() -> None:
    task = Task(id="t", prompt="p", answer="5")
    env = ToolEnv(tools=[raises_unprintable, circular], tasks=[task], grader=ExactGrader())
    state = await env.reset(task)
    calls = (ToolCall(id="1", name="raises_unprintable"), ToolCall(id="2", name="circular"))
    step = await env.step(state, Message(role="assistant", tool_calls=calls))
    assert step.messages[0].content == "error: Unprintable: (no message)"
    assert (step.messages[1].content or "").startswith("error: ValueError: Circular reference")


async def test_hundreds_of_calls_in_one_message_run_at_most_the_limit() -> None:
    runs = 0

    def count() -> str:
        """Count calls."""
        nonlocal runs
        runs += 1
        return "ok"

    task = Task(id="t", prompt="p", answer="5")
    env = ToolEnv(tools=[count], tasks=[task], grader=ExactGrader(), max_calls_per_turn=4)
    state = await env.reset(task)
    calls = tuple(ToolCall(id=f"c{i}", name="count") for i in range(500))
    step = await env.step(state, Message(role="assistant", tool_calls=calls))
    assert runs == 4
    assert [m.tool_call_id for m in step.messages] == [f"c{i}" for i in range(500)]  # each answered
    assert [m.content for m in step.messages[:4]] == ["ok"] * 4
    assert all("too many tool calls" in (m.content or "") for m in step.messages[4:])
    with pytest.raises(EnvironmentDefinitionError, match="max_calls_per_turn"):
        ToolEnv(tools=[count], tasks=[task], grader=ExactGrader(), max_calls_per_turn=0)
