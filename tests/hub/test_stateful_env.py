"""Per-rollout SQLite state: private copies, their lifetime, and hostile tool arguments."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from hub.env import Message, SeedDatabase, State, StatefulToolEnv, Task, ToolCall
from hub.env.aio import within
from hub.env.errors import EnvironmentDefinitionError
from hub.env.state import StateClosedError
from hub.env.stateful import STATE_KEY
from tests.hub.stateful_kit import SCHEMA, TASKS, deposit, make_env, task


def call(tool: str, i: int = 0, **args: object) -> Message:
    return Message(
        role="assistant", tool_calls=(ToolCall(id=f"c{i}", name=tool, arguments=json.dumps(args)),)
    )


async def run_calls(env: StatefulToolEnv, state: State, *calls: Message) -> list[str]:
    out: list[str] = []
    for c in calls:
        step = await env.step(state, c)
        state.messages += [c, *step.messages]
        out += [m.content or "" for m in step.messages]
    return out


def test_tools_take_the_database_and_the_model_sees_only_its_arguments() -> None:
    env = make_env()
    schema = {s["function"]["name"]: s["function"]["parameters"] for s in env.tool_schemas() or []}
    assert set(schema["deposit"]["properties"]) == {"name", "amount"}
    assert "db" not in json.dumps(schema)


async def test_64_concurrent_rollouts_do_not_see_each_others_writes() -> None:
    env = make_env()

    async def one(i: int) -> str:
        state = await env.reset(TASKS[0])
        await run_calls(env, state, call("set_balance", name="alice", value=i))
        await asyncio.sleep(0)  # let the other rollouts write the same row
        replies = await run_calls(env, state, call("balance", 1, name="alice"))
        await env.step(state, Message(role="assistant", content="done"))
        return replies[0]

    replies = await asyncio.gather(*(one(i) for i in range(64)))
    assert [json.loads(r)["balance"] for r in replies] == list(range(64))
    assert env.live_states() == 0
    seed = env.seed_for(TASKS[0]).snapshot()
    assert ("alice", 100) in seed["accounts"]


async def test_the_database_is_closed_when_the_episode_ends() -> None:
    env = make_env()
    state = await env.reset(TASKS[0])
    db = state.data[STATE_KEY]
    assert env.live_states() == 1
    await env.step(state, Message(role="assistant", content="done"))
    assert db.closed and env.live_states() == 0
    with pytest.raises(StateClosedError):
        db.query("SELECT 1")


@pytest.mark.parametrize("how", ["cancel", "timeout", "crash"])
async def test_an_interrupted_rollout_leaves_no_database_file(tmp_path: Path, how: str) -> None:
    env = make_env(storage="file")

    async def rollout() -> None:
        state = await env.reset(TASKS[0])
        await run_calls(env, state, call("deposit", name="alice", amount=1))
        if how == "crash":
            raise RuntimeError("the model client failed")
        await asyncio.sleep(3600)

    files = lambda: list(Path(env._folder or tmp_path).glob("verihub-state-*"))  # noqa: E731
    # the database closes when the rollout's state is dropped, and at aclose at the latest
    if how == "cancel":
        job = asyncio.ensure_future(rollout())
        for _ in range(500):  # until the rollout has made its call and sleeps
            await asyncio.sleep(0.01)
            live = list(env._live)
            if live and live[0].one("SELECT balance FROM accounts WHERE name = 'alice'") == {"balance": 101}:
                break
        assert len([f for f in files() if f.suffix == ".sqlite"]) == 1
        job.cancel()
        outcome = await asyncio.gather(job, return_exceptions=True)
        assert isinstance(outcome[0], asyncio.CancelledError)
    else:
        try:
            if how == "timeout":
                await asyncio.wait_for(rollout(), timeout=0.05)
            else:
                await rollout()
        except (asyncio.TimeoutError, RuntimeError) as exc:
            assert isinstance(exc, asyncio.TimeoutError if how == "timeout" else RuntimeError)
        else:
            raise AssertionError("the rollout should have failed")
    gc.collect()
    if how == "crash":  # the failed rollout's state is dropped at once, and its database with it
        assert files() == [] and env.live_states() == 0
    await env.aclose()  # evaluate() does this when a run ends, on success, failure or cancel
    assert files() == [] and env.live_states() == 0 and env._folder is None


async def test_aclose_closes_what_is_still_open() -> None:
    env = make_env(storage="file")
    states = [await env.reset(TASKS[0]) for _ in range(3)]
    folder = Path(env._folder or "")
    assert len(list(folder.glob("verihub-state-*"))) == 3
    await env.aclose()
    assert all(s.data[STATE_KEY].closed for s in states) and not folder.exists()


async def test_a_raising_tool_answers_with_an_error_and_changes_nothing() -> None:
    env = make_env()
    state = await env.reset(TASKS[0])
    replies = await run_calls(
        env,
        state,
        call("boom"),
        call("set_balance", 1, name="nobody", value=5),  # writes the log, then raises
        call("deposit", 2, name="alice", amount=-1),  # refuses by returning an error
    )
    assert replies[0].startswith("error: RuntimeError: the tool broke")
    assert replies[1].startswith("error: KeyError")
    assert replies[2].startswith("error: amount")
    rows = state.data[STATE_KEY].query("SELECT COUNT(*) AS n FROM log")
    assert rows == [{"n": 0}]


@pytest.mark.parametrize(
    "args",
    [
        {"name": "alice'; DROP TABLE accounts; --", "amount": 1},
        {"name": 'alice" OR 1=1 --', "amount": 1},
        {"name": "../../etc/passwd", "amount": 1},
        {"name": "x" * 70_000, "amount": 1},
        {"name": "alice", "amount": "1; DELETE FROM accounts"},
    ],
)
async def test_hostile_arguments_are_refused_or_bound(args: dict[str, object]) -> None:
    env = make_env()
    state = await env.reset(TASKS[0])
    reply = (await run_calls(env, state, call("deposit", **args)))[0]
    assert reply.startswith("error")
    accounts = state.data[STATE_KEY].query("SELECT name, balance FROM accounts ORDER BY name")
    assert accounts == [
        {"name": "alice", "balance": 100},
        {"name": "bob", "balance": 50},
        {"name": "carol", "balance": 0},
    ]


async def test_sql_cannot_attach_another_file(tmp_path: Path) -> None:
    env = make_env()
    state = await env.reset(TASKS[0])
    db = state.data[STATE_KEY]
    with pytest.raises(sqlite3.DatabaseError):
        db.execute("ATTACH DATABASE ? AS other", (str(tmp_path / "x.db"),))
    assert not (tmp_path / "x.db").exists()


def test_an_oversized_seed_file_is_refused_at_load(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE t(x BLOB); INSERT INTO t VALUES (zeroblob(300000));")
    conn.close()
    with pytest.raises(EnvironmentDefinitionError, match="over the cap"):
        SeedDatabase.from_file(path, max_bytes=100_000)
    assert SeedDatabase.from_file(path, max_bytes=1_000_000).snapshot()["t"][0][0] == bytes(300000)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fake.db"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(EnvironmentDefinitionError):
        SeedDatabase.from_file(path)


def test_a_task_whose_gold_replay_fails_is_refused_at_load() -> None:
    bad = task(
        "bad", [("deposit", {"name": "alice", "amount": 5}), ("deposit", {"name": "zed", "amount": 1})]
    )
    with pytest.raises(EnvironmentDefinitionError, match=r"task bad: gold action 2 \(deposit\) fails"):
        make_env([*TASKS, bad])


def test_a_task_without_requirements_is_refused_at_load() -> None:
    with pytest.raises(EnvironmentDefinitionError, match="StateRequirements"):
        make_env([Task(id="plain", prompt="hi", answer="42")])


def test_a_tool_that_is_not_deterministic_is_refused_at_load() -> None:
    env_tasks = [task("t", [("deposit", {"name": "alice", "amount": 5})])]
    with pytest.raises(EnvironmentDefinitionError, match="not deterministic"):
        StatefulToolEnv(
            tools=[deposit], tasks=env_tasks, seed=SeedDatabase.from_script(SCHEMA)
        )  # the log's timestamp is not declared volatile


def test_async_and_parameterless_tools_are_refused() -> None:
    async def later(db: object) -> str:
        return "x"

    def nothing() -> str:
        return "x"

    for fn in (later, nothing):
        with pytest.raises(EnvironmentDefinitionError):
            StatefulToolEnv(tools=[fn], tasks=[], seed=SeedDatabase.from_script(SCHEMA))


async def test_the_task_gets_its_own_seed_when_the_environment_maps_tasks_to_seeds() -> None:
    seeds = {
        "a": SeedDatabase.from_script(SCHEMA),
        "b": SeedDatabase.from_script(SCHEMA + "UPDATE accounts SET balance = 1;"),
    }
    tasks = [task(t, [("deposit", {"name": "alice", "amount": 1})]) for t in "ab"]
    env = StatefulToolEnv(
        tools=[deposit], tasks=tasks, seed=lambda t: seeds[t.id], volatile={"log": ["id", "at"]}
    )
    state = await env.reset(tasks[1])
    assert state.data[STATE_KEY].one("SELECT balance FROM accounts WHERE name = 'alice'") == {"balance": 1}


def test_a_task_answer_is_never_a_plain_string_for_the_model() -> None:
    env = make_env()
    t: Task = next(iter(env.tasks()))
    assert "gold_actions" in t.answer and "deposit" not in (t.prompt if isinstance(t.prompt, str) else "")


async def test_a_rollout_cancelled_during_a_tool_call_closes_its_database_at_once() -> None:
    env = make_env(storage="file")
    state = await env.reset(TASKS[0])
    db = state.data[STATE_KEY]
    with db.transaction():  # an earlier call still holds the database: the next one waits
        job = asyncio.ensure_future(env.step(state, call("deposit", name="alice", amount=1)))
        await asyncio.sleep(0.05)
        job.cancel()
        assert isinstance((await asyncio.gather(job, return_exceptions=True))[0], asyncio.CancelledError)
    for _ in range(200):  # the abandoned call's thread may take the lock first; it closes after it
        if db.closed:
            break
        await asyncio.sleep(0.01)
    assert db.closed and db.path is not None and not Path(db.path).exists()
    await env.aclose()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 has only asyncio.wait_for")
async def test_a_cancel_that_races_a_tool_result_is_not_swallowed() -> None:
    # the thread's result and the cancellation land in the same loop turn: the call must end
    # cancelled (asyncio.wait_for on 3.11 returned the result and the rollout ran on)
    loop = asyncio.get_running_loop()
    result: asyncio.Future[str] = loop.create_future()

    async def call() -> str:
        return await within(result, 10.0)

    job = asyncio.ensure_future(call())
    await asyncio.sleep(0)  # the call now waits on the result
    result.set_result("done")
    job.cancel()
    outcome = await asyncio.gather(job, return_exceptions=True)
    assert isinstance(outcome[0], asyncio.CancelledError)


async def test_within_still_times_out() -> None:
    with pytest.raises(asyncio.TimeoutError):
        await within(asyncio.sleep(5), 0.01)
