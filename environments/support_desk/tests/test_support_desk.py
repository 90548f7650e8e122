"""support_desk: generated tasks, the application's rules in the tools, state-based grades."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from verihub_support_desk import load_environment
from verihub_support_desk.generate import generate
from verihub_support_desk.tools import TOOLS

from hub.env import Action, Message, Rollout, StatefulToolEnv, Task, ToolCall
from hub.env.errors import EnvironmentDefinitionError
from hub.env.state_grading import gold_messages, requirements_of
from hub.env.stateful import STATE_KEY
from hub.env.types import Timing


@pytest.fixture(scope="module")
def env() -> StatefulToolEnv:
    return load_environment()


def rollout(task: Task, messages: list[Message]) -> Rollout:
    return Rollout(task_id=task.id, rollout_index=0, messages=messages, timing=Timing(started_at=time.time()))


def of_kind(env: StatefulToolEnv, kind: str) -> Task:
    return next(t for t in env.tasks("train") if t.metadata["kind"] == kind)


def test_tasks_are_deterministic_distinct_and_cover_every_level(env: StatefulToolEnv) -> None:
    seed_a, a = generate(64)
    seed_b, b = generate(64)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b] and seed_a.image == seed_b.image
    train, test = list(env.tasks("train")), list(env.tasks("test"))
    assert len(train) + len(test) == 320 and {t.id for t in train}.isdisjoint({t.id for t in test})
    assert Counter(t.metadata["difficulty"] for t in test) == {1: 16, 2: 16, 3: 16, 4: 16}
    assert len({t.prompt for t in train + test}) == 320
    assert 8 <= len(TOOLS) <= 12


def test_level_filter_and_bad_arguments() -> None:
    assert {t.metadata["difficulty"] for t in load_environment(level=3, n=40).tasks("test")} == {3}
    with pytest.raises(EnvironmentDefinitionError):
        load_environment(level=9)


async def test_the_gold_trajectory_of_each_kind_earns_full_reward(env: StatefulToolEnv) -> None:
    firsts = {t.metadata["kind"]: t for t in reversed(list(env.tasks("train")))}
    assert len(firsts) == 10
    for task in firsts.values():
        grade = await env.grade(task, rollout(task, gold_messages(task, env.system_prompt)))
        assert grade.passed and grade.score == 1.0, (task.id, grade.reason)


@pytest.mark.slow
async def test_every_gold_trajectory_earns_full_reward(env: StatefulToolEnv) -> None:
    for split in env.splits:
        for task in env.tasks(split):
            grade = await env.grade(task, rollout(task, gold_messages(task, env.system_prompt)))
            assert grade.passed and grade.score == 1.0, (task.id, grade.reason)


@pytest.mark.slow
async def test_doing_nothing_and_another_tasks_actions_fail(env: StatefulToolEnv) -> None:
    tasks = list(env.tasks("test"))
    for task, other in zip(tasks, tasks[1:] + tasks[:1], strict=True):
        nothing = [*task.messages(env.system_prompt), Message(role="assistant", content="All done!")]
        assert not (await env.grade(task, rollout(task, nothing))).passed, task.id
        spec = requirements_of(other)
        assert spec is not None
        theirs = gold_messages(task, env.system_prompt, actions=spec.gold_actions)
        assert not (await env.grade(task, rollout(task, theirs))).passed, task.id


async def call(env: StatefulToolEnv, task: Task, *calls: tuple[str, dict[str, Any]]) -> list[str]:
    state = await env.reset(task)
    out = []
    for i, (name, args) in enumerate(calls):
        msg = Message(
            role="assistant", tool_calls=(ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args)),)
        )
        step = await env.step(state, msg)
        out.append(step.messages[0].content or "")
    env.close_state(state)
    return out


def gold_arg(task: Task, tool: str, key: str) -> Any:
    spec = requirements_of(task)
    assert spec is not None
    return next(a.arguments[key] for a in spec.gold_actions if a.name == tool)


async def test_a_refund_above_the_limit_needs_an_approval_from_another_supervisor(
    env: StatefulToolEnv,
) -> None:
    task = of_kind(env, "refund_approval")
    oid, amount = gold_arg(task, "issue_refund", "order_id"), gold_arg(task, "issue_refund", "amount")
    replies = await call(
        env,
        task,
        ("issue_refund", {"order_id": oid, "amount": amount, "reason": "broken"}),
        ("request_approval", {"order_id": oid, "amount": amount, "supervisor_id": "ag_rivera"}),
        ("request_approval", {"order_id": oid, "amount": amount, "supervisor_id": "ag_lee"}),
        ("issue_refund", {"order_id": oid, "amount": amount, "reason": "broken", "approval_id": 1}),
    )
    assert "need a supervisor's approval_id" in replies[0]
    assert "cannot be given by the agent who requests it" in replies[1]
    assert "is not a supervisor" in replies[2]
    assert "does not cover" in replies[3]


async def test_the_tools_refuse_what_the_application_forbids(env: StatefulToolEnv) -> None:
    shipped = of_kind(env, "cancel_shipped")
    suspended = of_kind(env, "suspended")
    s_order = gold_arg(shipped, "get_order", "order_id")
    replies = await call(env, shipped, ("cancel_order", {"order_id": s_order}))
    assert "only placed orders can be cancelled" in replies[0]
    spec = requirements_of(suspended)
    assert spec is not None
    cust = await call(env, suspended, ("find_customer", {"email": spec.gold_actions[0].arguments["email"]}))
    assert json.loads(cust[0])["status"] == "suspended"
    refund = next(t for t in env.tasks("train") if t.metadata["kind"] == "refund")
    oid = gold_arg(refund, "issue_refund", "order_id")
    over = await call(env, refund, ("issue_refund", {"order_id": oid, "amount": 99999, "reason": "x"}))
    assert "more than is left" in over[0]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("find_customer", {"email": "x' OR '1'='1"}),
        ("update_email", {"customer_id": 1, "new_email": "a@b.c'; DROP TABLE customers; --"}),
        ("add_note", {"ticket_id": 5000, "body": "x" * 5000}),
        ("get_order", {"order_id": "1 OR 1=1"}),
        ("issue_refund", {"order_id": 1000, "amount": 1e12, "reason": "x"}),
    ],
)
async def test_hostile_arguments_are_refused(env: StatefulToolEnv, tool: str, args: dict[str, Any]) -> None:
    task = of_kind(env, "cancel")
    (reply,) = await call(env, task, (tool, args))
    assert reply.startswith("error")


async def test_a_shipped_order_handled_by_policy_passes_and_a_cancel_attempt_is_harmless(
    env: StatefulToolEnv,
) -> None:
    task = of_kind(env, "cancel_shipped")
    spec = requirements_of(task)
    assert spec is not None
    tries = [Action(name="cancel_order", arguments={"order_id": gold_arg(task, "get_order", "order_id")})]
    state = await env.reset(task)
    db = state.data[STATE_KEY]
    messages = gold_messages(task, env.system_prompt, actions=[*tries, *spec.gold_actions])
    messages[3] = messages[3].model_copy(update={"content": env.call_now(db, tries[0])})  # the refusal
    env.close_state(state)
    assert messages[3].content and messages[3].content.startswith("error")
    assert (await env.grade(task, rollout(task, messages))).passed


def test_the_system_prompt_states_the_policies(env: StatefulToolEnv) -> None:
    prompt = env.system_prompt or ""
    for phrase in ("30 days", "60 days", "$100.00", "never yourself", "on-call supervisor"):
        assert phrase in prompt


async def test_gold_as_a_model_earns_one_on_every_rollout_and_reports_pass_hat_k(tmp_path: Path) -> None:
    from hub.run.evaluate import evaluate

    summary = await evaluate("support_desk", model="gold", out=tmp_path / "run", num_tasks=12, rollouts=2)
    assert summary.n_rollouts == 24 and summary.mean_reward == 1.0
    assert summary.pass_all_k == {"1": 1.0, "2": 1.0}
