"""Tools as typed Python functions, in the OpenAI tools format; hostile arguments."""

from __future__ import annotations

import asyncio

import pytest

from graders.exact import ExactGrader
from hub import Message, Task, ToolCall, ToolEnv, tool_schema
from hub.errors import EnvironmentDefinitionError


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
