"""``--model gold``: gold actions through the real tools earn 1.0; the run exports as SFT data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hub.env import Message, Task
from hub.env.errors import UsageError
from hub.run.gold import GoldClient
from hub.run.rundir import RunDir
from hub.run.runner import Runner
from hub.train.export import sft_records
from tests.conftest import make_config
from tests.hub.stateful_kit import TASKS, make_env


async def test_gold_earns_full_reward_on_every_rollout_and_exports_trajectories(tmp_path: Path) -> None:
    env = make_env(system_prompt="You run a bank.")
    config = make_config("bank", num_tasks=len(TASKS), rollouts=3, max_turns=8, model="gold", base_url=None)
    rundir = RunDir(tmp_path / "run")
    rundir.create(config)
    client = GoldClient(TASKS, env.system_prompt)
    summary = await Runner(env=env, client=client, config=config, rundir=rundir).run(TASKS)
    await env.aclose()
    rollouts = list(rundir.iter_rollouts())
    assert len(rollouts) == 9 and all(r.reward == 1.0 and r.passed for r in rollouts)
    assert summary.pass_all_k and all(v == 1.0 for v in summary.pass_all_k.values())
    assert env.live_states() == 0
    records = {r["task_id"]: r for r in sft_records(tmp_path / "run")}
    carol = records["fix-carol"]["messages"]
    assert [m["role"] for m in carol] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert json.loads(carol[3]["content"]) == {"name": "carol", "balance": 0}  # the real tool's result
    assert carol[2]["tool_calls"][0]["function"]["name"] == "balance"
    assert carol[-1]["content"] == "carol has 3"


async def test_gold_answers_plainly_for_an_unknown_opening() -> None:
    client = GoldClient(TASKS, None)
    done = await client.chat(
        [Message(role="user", content="something else")], sampling=make_config().sampling
    )
    assert done.message.tool_calls is None and "no gold" in (done.message.content or "")


def test_gold_needs_stateful_tasks() -> None:
    with pytest.raises(UsageError, match="gold actions"):
        GoldClient([Task(id="t", prompt="2+2", answer="4")], None)


async def test_rollouts_cut_by_the_turn_limit_leave_no_database_open(tmp_path: Path) -> None:
    env = make_env(storage="file")
    config = make_config("bank", num_tasks=len(TASKS), rollouts=2, max_turns=1, model="gold", base_url=None)
    rundir = RunDir(tmp_path / "run")
    rundir.create(config)
    await Runner(env=env, client=GoldClient(TASKS, None), config=config, rundir=rundir).run(TASKS)
    rollouts = list(rundir.iter_rollouts())
    assert len(rollouts) == 6 and all(r.truncated for r in rollouts)
    assert {r.task_id for r in rollouts if r.passed} == {"pay-alice", "pay-bob"}  # one call was enough
    assert env.live_states() == 0  # the runner dropped each state as its rollout ended
    assert env._folder is not None and list(Path(env._folder).iterdir()) == []
    await env.aclose()
