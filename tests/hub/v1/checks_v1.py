"""hub.train.verifiers_v1, run INSIDE the verifiers 0.4.x venv (tests/hub/test_verifiers_v1.py
starts pytest on this file there). Skipped anywhere verifiers.v1 has no Taskset API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))

vf = pytest.importorskip("verifiers.v1")
if not hasattr(vf, "Taskset"):
    pytest.skip("needs verifiers 0.4.x", allow_module_level=True)

from hub.env.errors import UsageError  # noqa: E402
from hub.env.types import Message, Rollout, Timing  # noqa: E402
from hub.env.types import Task as HubTask  # noqa: E402
from hub.run.fake_server import FakeChatServer  # noqa: E402
from hub.train.verifiers_v1 import load_v1_taskset  # noqa: E402


def _rollout(env, task, reply: str):  # type: ignore[no-untyped-def]
    msgs = [*task.messages(None), Message(role="assistant", content=reply)]
    return Rollout(
        task_id=task.id, rollout_index=0, messages=msgs, completion=reply, timing=Timing(started_at=0.0)
    )


def test_tasks_come_from_the_taskset_with_prompts() -> None:
    env = load_v1_taskset("toy_add_v1", config={"num_examples": 3})
    tasks = list(env.tasks("test"))
    assert [t.id for t in tasks] == ["add-41-1", "add-2-2", "add-40-2"]
    roles = [(m.role, m.content) for m in tasks[1].messages(None)]
    assert roles == [("system", "Reply as 'Answer: <number>'."), ("user", "What is 2 + 2?")]


async def test_rewards_are_weighted_checks_and_metrics_in_the_reason() -> None:
    env = load_v1_taskset("toy_add_v1")
    t41, t2 = list(env.tasks("test"))[:2]
    good = await env.grade(t41, _rollout(env, t41, "Answer: 42"))
    assert good.passed and good.score == 1.0
    assert {(c.name, c.weight, c.score) for c in good.checks} == {("correct", 1.0, 1.0), ("brief", 0.5, 1.0)}
    assert "reply_chars=10" in good.reason
    wrong = await env.grade(t2, _rollout(env, t2, "Answer: 5"))
    assert not wrong.passed and wrong.score == pytest.approx(0.5 / 1.5)
    wordy = await env.grade(t2, _rollout(env, t2, "Let me think. 2 + 2 is... Answer: 4"))
    assert wordy.score == pytest.approx(1.0 / 1.5) and not wordy.passed  # correct, not brief


async def test_a_raising_reward_is_a_grader_error() -> None:
    env = load_v1_taskset("toy_add_v1", config={"crash": True})
    task = next(iter(env.tasks("test")))
    grade = await env.grade(task, _rollout(env, task, "Answer: 42"))
    assert grade.is_error and "reward bug" in grade.reason


async def test_stop_conditions_are_checked_after_the_turn() -> None:
    env = load_v1_taskset("toy_add_v1")
    task = next(iter(env.tasks("test")))
    state = await env.reset(task)
    state.messages.append(Message(role="assistant", content="Answer: 42"))
    step = await env.step(state, state.messages[-1])
    assert step.terminated and step.info["stop_condition"] == "answered"
    state = await env.reset(task)
    state.messages.append(Message(role="assistant", content="no idea"))
    step = await env.step(state, state.messages[-1])
    assert step.terminated and step.info["stop_condition"] == "no_user"


@pytest.mark.parametrize(
    ("module", "feature"),
    [
        ("toy_container_v1", "NEEDS_CONTAINER"),
        ("toy_setup_v1", r"setup\(\) hook"),
        ("toy_mcp_v1", r"a remote MCP tool server RemoteTools \(url http://127.0.0.1:9/mcp\)"),
        ("toy_mcp_v1:stateful", r"a stateful tool server CountingTools \(its state syncs over MCP\)"),
    ],
)
def test_what_needs_a_runtime_is_refused_by_name(module: str, feature: str) -> None:
    module, _, kind = module.partition(":")
    env = load_v1_taskset(module, config={"kind": kind} if kind else None)
    with pytest.raises(UsageError, match=feature):
        list(env.tasks("test"))
    if module == "toy_mcp_v1":
        with pytest.raises(UsageError, match=feature):
            env.tool_schemas()  # what the runner asks first


async def test_a_toolset_of_python_functions_becomes_verihub_tools() -> None:
    from hub.env.types import ToolCall

    env = load_v1_taskset("toy_tools_v1")
    schemas = {s["function"]["name"]: s["function"] for s in env.tool_schemas() or []}
    assert sorted(schemas) == ["calc_tools_add", "calc_tools_times"]  # v1's <server>_<tool> names
    assert schemas["calc_tools_add"]["description"] == "Add two integers."
    assert schemas["calc_tools_times"]["parameters"]["required"] == ["a"]  # b has a default
    task = next(iter(env.tasks("test")))
    state = await env.reset(task)
    calls = (
        ToolCall(id="c1", name="calc_tools_add", arguments='{"a": 2, "b": 3}'),
        ToolCall(id="c2", name="calc_tools_times", arguments='{"a": 7}'),
        ToolCall(id="c3", name="calc_tools_add", arguments='{"a": "two"}'),
        ToolCall(id="c4", name="nope", arguments="{}"),
    )
    step = await env.step(state, Message(role="assistant", content=None, tool_calls=calls))
    assert not step.terminated
    assert [(m.role, m.tool_call_id) for m in step.messages] == [("tool", f"c{i}") for i in range(1, 5)]
    assert [m.content for m in step.messages][:2] == ["5", "14"]
    assert step.messages[2].content.startswith("error: invalid arguments")  # type: ignore[union-attr]
    assert "unknown tool 'nope'" in (step.messages[3].content or "")
    done = await env.step(state, Message(role="assistant", content="Answer: 5"))
    assert done.terminated and done.info["stop_condition"] == "no_user"


async def test_verihub_runs_a_v1_taskset_with_tools(tmp_path: Path) -> None:
    """The runner sends the bridged tool schemas, answers the model's call with the tool, and the
    task's own reward grades the transcript."""
    from hub.run.evaluate import evaluate
    from hub.run.fake_server import tool_call_reply
    from hub.run.rundir import RunDir

    seen_tools: list[Any] = []

    def responder(request: dict[str, Any]) -> Any:
        seen_tools.append(request.get("tools"))
        last = request["messages"][-1]
        if last["role"] == "tool":
            return f"Answer: {last['content']}"
        a, b = (int(x) for x in last["content"].split("?")[0].split()[-3::2])
        return tool_call_reply("calc_tools_add", {"a": a, "b": b})

    async with FakeChatServer(responder=responder) as server:
        summary = await evaluate(
            "verifiers-v1", model="fake", base_url=server.base_url, out=tmp_path / "run",
            env_args={"taskset": "toy_tools_v1"},
        )  # fmt: skip
    assert summary.mean_reward == 1.0
    assert {t["function"]["name"] for t in seen_tools[0]} == {"calc_tools_add", "calc_tools_times"}
    rollouts = list(RunDir(tmp_path / "run").iter_rollouts())
    assert len(rollouts) == 2
    for r in rollouts:
        assert [m.role for m in r.messages] == ["user", "assistant", "tool", "assistant"]
        assert r.messages[2].content == r.completion.split()[-1]
        assert "tool_results=1" in (r.grade.reason if r.grade else "")


def test_an_unknown_taskset_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="cannot load v1 taskset 'no_such_taskset_xyz'"):
        load_v1_taskset("no_such_taskset_xyz")


@pytest.mark.parametrize("stream", [False, True])
async def test_verihub_eval_runs_the_taskset(tmp_path: Path, stream: bool) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), os.environ.get("PYTHONPATH", "")])}
    env["VH_FAKE_KEY"] = "x"
    out = tmp_path / "run"
    async with FakeChatServer() as server:  # answers "Answer: 42"
        cmd = [
            str(Path(sys.executable).parent / "verihub"), "eval", "verifiers-v1",
            "--env-arg", "taskset=toy_add_v1", "--model", "fake", "--base-url", server.base_url,
            "--api-key-env", "VH_FAKE_KEY", "--out", str(out), "--max-tokens", "16",
            *(["--stream"] if stream else []),
        ]  # fmt: skip
        proc = await _run(cmd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    scores = {r["task_id"]: r["reward"] for r in rows}
    expected = {"add-41-1": 1.0, "add-40-2": 1.0, "add-2-2": 0.5 / 1.5, "add-1-1": 0.5 / 1.5}
    assert scores == pytest.approx(expected)


async def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        *cmd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=300)
    return subprocess.CompletedProcess(cmd, proc.returncode or 0, stdout.decode(), stderr.decode())


# -- verihub environments as v1 tasksets (hub.train.v1_taskset, the `verihub-v1` taskset id) ----
async def test_to_v1_taskset_scores_with_the_verihub_grader() -> None:
    from hub.train.v1_taskset import VerihubTask, to_v1_taskset
    from hub.train.verifiers_v1 import v1_trace

    tasks = list(to_v1_taskset("arith", n=3))
    assert len(tasks) == 3 and all(isinstance(t, VerihubTask) for t in tasks)
    assert tasks[0].data.prompt[0].content.startswith("Compute ")
    for task, right in ((tasks[0], True), (tasks[1], False)):
        answer = json.loads(task.data.answer)
        reply = f"Answer: {answer}" if right else f"Answer: {int(answer) + 1}"
        msgs = [Message(role=m.role, content=m.content) for m in task.data.prompt]
        trace = v1_trace(task, [*msgs, Message(role="assistant", content=reply)], len(msgs))
        await task.score(trace, None)
        assert trace.rewards["verihub_reward"].score == (1.0 if right else 0.0)
        assert trace.metrics["verihub_passed"] == (1.0 if right else 0.0)
        assert trace.info["verihub_grade"]["status"] == ("correct" if right else "incorrect")


def test_an_unknown_verihub_env_is_a_usage_error() -> None:
    from hub.train.v1_taskset import _environment

    with pytest.raises(UsageError, match="no installed environment"):
        _environment("no_such_env_xyz", "{}")


def test_tools_run_by_a_custom_step_are_refused_and_toolenv_tools_are_not() -> None:
    from hub.train.v1_taskset import VerihubTaskset, VerihubTasksetConfig, _environment, to_v1_taskset

    with pytest.raises(UsageError, match=r"step_tools_fixture has tools .*StepToolsEnv\.step.*per-rollout"):
        _environment("step_tools_fixture", "{}")
    tasks = list(to_v1_taskset("guess_fixture"))
    assert [t.data.id for t in tasks] == ["guess-0", "guess-1", "guess-2", "guess-3"]
    assert VerihubTaskset.toolsets(VerihubTasksetConfig(env="guess_fixture")) == []
    (server,) = VerihubTaskset.toolsets(VerihubTasksetConfig(env="tools_fixture"))
    assert (server.config.env, server.config.env_args, server.server_name) == ("tools_fixture", "{}", "")


async def test_a_tool_result_is_cut_at_the_environments_limit() -> None:
    from graders.exact import ExactGrader
    from hub.env.tools import ToolEnv
    from hub.train.v1_toolset import _mcp_function

    def shout(word: str) -> str:
        """Repeat a word."""
        return word * 10

    env = ToolEnv(tools=[shout], tasks=[], grader=ExactGrader(), max_result_chars=6)
    assert await _mcp_function(env.tools["shout"], env)(word="ab") == "ababab [truncated]"


def test_the_graded_transcript_keeps_tool_calls_and_results() -> None:
    from verifiers.v1.types import AssistantMessage, ToolMessage, UserMessage
    from verifiers.v1.types import ToolCall as V1ToolCall

    from hub.env.types import ToolCall
    from hub.train.v1_taskset import _hub_messages

    call = V1ToolCall(id="c1", name="add", arguments='{"a": 2, "b": 3}')
    v1 = [
        UserMessage(content="What is 2 + 3?"),
        AssistantMessage(content=None, tool_calls=[call]),
        ToolMessage(tool_call_id="c1", content="5", name="add"),
        AssistantMessage(content="Answer: 5"),
    ]
    assert _hub_messages(v1) == [
        Message(role="user", content="What is 2 + 3?"),
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="add", arguments='{"a": 2, "b": 3}'),)),
        Message(role="tool", content="5", tool_call_id="c1", name="add"),
        Message(role="assistant", content="Answer: 5"),
    ]


async def test_the_toolset_serves_the_verihub_tools_over_mcp() -> None:
    """Registered on a real MCP server: verihub's names and schemas, and calls answered by
    verihub's Tool.call (its validation, its timeout), errors as text for the model."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from hub.registry import load_environment
    from hub.train.v1_toolset import VerihubToolset, VerihubToolsetConfig

    mcp = MCPServer("t")
    VerihubToolset(VerihubToolsetConfig(env="tools_fixture")).register(mcp)
    listed = {t.name: t for t in await mcp.list_tools()}
    expected = {
        s["function"]["name"]: s["function"] for s in load_environment("tools_fixture").tool_schemas() or []
    }
    assert sorted(listed) == sorted(expected) == ["add", "nap"]
    for name, tool in listed.items():
        assert tool.description == expected[name]["description"]
        props = {
            k: {f: v for f, v in p.items() if f != "title"}
            for k, p in tool.input_schema["properties"].items()
        }
        assert props == expected[name]["parameters"]["properties"]  # MCP adds titles
        assert tool.input_schema["required"] == expected[name]["parameters"]["required"]

    async def text(name: str, args: dict[str, Any]) -> str:
        result = await mcp.call_tool(name, args)
        return "".join(c.text for c in result.content)  # type: ignore[union-attr]

    assert await text("add", {"a": 2, "b": 3}) == "5"
    assert await text("nap", {"seconds": 5}) == "error: tool nap timed out after 0.5s"
    with pytest.raises(ToolError, match="Input should be a valid integer"):  # MCP checks the same fields
        await mcp.call_tool("add", {"a": "two", "b": 1})  # (served: an isError result, its text)


async def test_real_vf_eval_runs_a_verihub_env(tmp_path: Path) -> None:
    """vf-eval 0.4.0 with the null harness (a chat program run by uv) and the subprocess
    runtime, against the streaming fake server; rewards must equal verihub's own grades."""
    from hub.registry import load_environment
    from hub.train.v1_taskset import to_v1_taskset

    env = {**os.environ, "VH_FAKE_KEY": "x"}
    async with FakeChatServer() as server:  # "Answer: 42", streamed (vf asks for stream: true)
        cmd = [
            str(Path(sys.executable).parent / "vf-eval"), "verihub-v1",
            "--env.taskset.env", "arith", "--env.taskset.n", "3",
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
            "-m", "fake", "--client.base-url", server.base_url, "--client.api-key-var", "VH_FAKE_KEY",
            "--no-push", "-n", "2", "-r", "1", "--sampling.max-tokens", "16", "-o", str(tmp_path),
        ]  # fmt: skip
        proc = await _run(cmd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (traces,) = tmp_path.glob("verihub-v1--fake--null--*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 2
    arith = load_environment("arith")
    by_id = {t.data.id: t for t in to_v1_taskset("arith", n=3)}
    for ep in episodes:
        (trace,) = ep["traces"]
        task = by_id[trace["task"]["data"]["id"]]
        assert [n["message"]["content"] for n in trace["nodes"]][-1] == "Answer: 42"
        msgs = [*(Message(role=m.role, content=m.content) for m in task.data.prompt)]
        rollout = Rollout(
            task_id=task.data.id,
            rollout_index=0,
            messages=[*msgs, Message(role="assistant", content="Answer: 42")],
            completion="Answer: 42",
            timing=Timing(started_at=0.0),
        )
        hub_task = HubTask(id=task.data.id, prompt=tuple(msgs), answer=json.loads(task.data.answer))
        expected = await arith.grade(hub_task, rollout)
        assert trace["rewards"]["verihub_reward"]["score"] == expected.score
        assert trace["info"]["verihub_grade"]["reason"] == expected.reason


def _bisect(request: dict[str, Any]) -> str:
    """Guess by halving [1, 8] from the environment's higher/lower replies."""
    lo, hi, guess = 1, 8, None
    for m in request["messages"]:
        if m["role"] == "assistant":
            guess = int(m["content"])
        elif m["role"] == "user" and guess is not None:
            lo, hi = (guess + 1, hi) if "higher" in m["content"] else (lo, guess - 1)
    return str((lo + hi) // 2)


async def test_real_vf_eval_plays_a_multi_turn_verihub_env(tmp_path: Path) -> None:
    """vf-eval 0.4.0 (null harness) on the multi-turn fixture `guess_fixture`: VerihubEnv feeds
    each step's reply back as the next user turn until the verihub env ends the episode."""
    env = {**os.environ, "VH_FAKE_KEY": "x"}
    async with FakeChatServer(responder=_bisect) as server:
        cmd = [
            str(Path(sys.executable).parent / "vf-eval"), "verihub-v1",
            "--env.taskset.env", "guess_fixture", "--env.taskset.n", "3",
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
            "-m", "fake", "--client.base-url", server.base_url, "--client.api-key-var", "VH_FAKE_KEY",
            "--no-push", "-n", "3", "-r", "1", "--sampling.max-tokens", "8", "-o", str(tmp_path),
        ]  # fmt: skip
        proc = await _run(cmd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (traces,) = tmp_path.glob("verihub-v1--fake--null--*/traces.jsonl")
    by_task = {}
    for line in traces.read_text().splitlines():
        (trace,) = json.loads(line)["traces"]
        assert trace["ok"], trace["errors"]
        by_task[trace["task"]["data"]["id"]] = trace
    assert sorted(by_task) == ["guess-0", "guess-1", "guess-2"]
    expected = {  # (model turns, the replies the model saw, reward)
        "guess-0": (3, ["higher", "lower"], 1.0),  # 4, 6, 5
        "guess-1": (2, ["lower"], 1.0),  # 4, 2
        "guess-2": (4, ["higher"] * 3, 0.0),  # 4, 6, 7, 8: max_turns, and wrong
    }
    for task_id, (turns, replies, reward) in expected.items():
        trace = by_task[task_id]
        messages = [n["message"] for n in trace["nodes"]]
        said = [m["content"] for m in messages if m["role"] == "user"][1:]  # after the task's prompt
        assert said == replies, messages
        assert sum(m["role"] == "assistant" for m in messages) == turns
        assert trace["info"]["verihub_turns"] == turns
        assert trace["rewards"]["verihub_reward"]["score"] == reward
        assert trace["info"]["verihub_grade"]["status"] == ("correct" if reward else "incorrect")


async def test_real_vf_eval_calls_a_verihub_envs_tools(tmp_path: Path) -> None:
    """vf-eval 0.4.0 (null harness) on `tools_fixture`, a ToolEnv: the model sees verihub's tool
    schemas, the harness's tool loop calls them through the taskset's v1 toolset (`add` answers,
    `nap` times out as verihub's timeout says), the result reaches the model, and the reward is
    the verihub grade of the transcript with the tool call in it."""
    seen_tools: list[Any] = []

    def responder(request: dict[str, Any]) -> Any:
        from hub.run.fake_server import tool_call_reply

        seen_tools.append(request.get("tools"))
        last = request["messages"][-1]
        if last["role"] == "tool":
            return f"Answer: {last['content']}"
        a, b = (int(x) for x in re.findall(r"\d+", last["content"])[:2])
        if a == b:  # the second task naps past the tool's timeout
            return tool_call_reply("nap", {"seconds": 5})
        return tool_call_reply("add", {"a": a, "b": b})

    env = {**os.environ, "VH_FAKE_KEY": "x"}
    async with FakeChatServer(responder=responder) as server:
        cmd = [
            str(Path(sys.executable).parent / "vf-eval"), "verihub-v1",
            "--env.taskset.env", "tools_fixture",
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
            "-m", "fake", "--client.base-url", server.base_url, "--client.api-key-var", "VH_FAKE_KEY",
            "--no-push", "-n", "2", "-r", "1", "--sampling.max-tokens", "16", "-o", str(tmp_path),
        ]  # fmt: skip
        proc = await _run(cmd, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert {t["function"]["name"] for t in seen_tools[0]} == {"add", "nap"}
    (traces,) = tmp_path.glob("verihub-v1--fake--null--*/traces.jsonl")
    by_task = {}
    for line in traces.read_text().splitlines():
        (trace,) = json.loads(line)["traces"]
        assert trace["ok"], trace["errors"]
        by_task[trace["task"]["data"]["id"]] = trace
    assert sorted(by_task) == ["sum-2-3", "sum-4-4"]
    expected = {"sum-2-3": ("5", 1.0), "sum-4-4": ("error: tool nap timed out after 0.5s", 0.0)}
    for task_id, (result, reward) in expected.items():
        trace = by_task[task_id]
        messages = [n["message"] for n in trace["nodes"]]
        assert [m["role"] for m in messages][-3:] == ["assistant", "tool", "assistant"], messages
        assert messages[-2]["content"] == result or messages[-2]["content"][0]["text"] == result
        assert messages[-1]["content"] == f"Answer: {result}"
        grade = trace["info"]["verihub_grade"]
        assert trace["rewards"]["verihub_reward"]["score"] == grade["score"] == reward
        assert grade["status"] == ("correct" if reward else "incorrect")
        assert trace["info"]["verihub_turns"] == 1  # the tool loop ran inside the harness's turn
