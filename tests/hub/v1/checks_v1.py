"""hub.train.verifiers_v1, run INSIDE the verifiers 0.4.x venv (tests/hub/test_verifiers_v1.py
starts pytest on this file there). Skipped anywhere verifiers.v1 has no Taskset API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))

vf = pytest.importorskip("verifiers.v1")
if not hasattr(vf, "Taskset"):
    pytest.skip("needs verifiers 0.4.x", allow_module_level=True)

from hub.env.errors import UsageError  # noqa: E402
from hub.env.types import Message, Rollout, Timing  # noqa: E402
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
    [("toy_container_v1", "NEEDS_CONTAINER"), ("toy_setup_v1", r"setup\(\) hook")],
)
def test_what_needs_a_runtime_is_refused_by_name(module: str, feature: str) -> None:
    env = load_v1_taskset(module)
    with pytest.raises(UsageError, match=feature):
        list(env.tasks("test"))


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

    t0 = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *cmd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=300)
    assert time.monotonic() - t0 < 300
    return subprocess.CompletedProcess(cmd, proc.returncode or 0, stdout.decode(), stderr.decode())
