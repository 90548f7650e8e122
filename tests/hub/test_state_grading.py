"""State-based grading: final state against the gold replay, required and forbidden actions,
the final answer, and the rule that combines them."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import ValidationError

from hub.env import Action, Message, Rollout, StateRequirements, Task, ToolCall
from hub.env.state_grading import action_matches, executed_actions, gold_messages, requirements_of
from hub.env.types import Timing
from tests.hub.stateful_kit import TASKS, make_env, task


def rollout(t: Task, messages: list[Message]) -> Rollout:
    return Rollout(task_id=t.id, rollout_index=0, messages=messages, timing=Timing(started_at=time.time()))


def by_id(tid: str) -> Task:
    return next(t for t in TASKS if t.id == tid)


def actions_transcript(
    t: Task, actions: list[tuple[str, dict[str, object]]], final: str = "ok"
) -> list[Message]:
    return gold_messages(t, None, actions=[Action(name=n, arguments=a) for n, a in actions])[:-1] + [
        Message(role="assistant", content=final)
    ]


async def test_the_gold_trajectory_earns_full_reward_on_every_task() -> None:
    env = make_env()
    for t in TASKS:
        grade = await env.grade(t, rollout(t, gold_messages(t, env.system_prompt)))
        assert grade.passed and grade.score == 1.0, (t.id, grade.reason)


@pytest.mark.parametrize("tid", [t.id for t in TASKS])
async def test_doing_nothing_or_only_answering_fails(tid: str) -> None:
    env = make_env()
    t = by_id(tid)
    spec = requirements_of(t)
    assert spec is not None
    for text in ["", "I have done it.", spec.answer or "Done."]:
        grade = await env.grade(t, rollout(t, [*t.messages(), Message(role="assistant", content=text)]))
        assert not grade.passed and grade.score == 0.0


async def test_another_tasks_gold_actions_fail() -> None:
    env = make_env()
    alice, bob = by_id("pay-alice"), by_id("pay-bob")
    other = gold_messages(alice, None, actions=requirements_of(bob).gold_actions)  # type: ignore[union-attr]
    grade = await env.grade(alice, rollout(alice, other))
    assert not grade.passed
    assert "accounts" in grade.checks[0].reason


async def test_volatile_columns_are_ignored_and_other_columns_are_not() -> None:
    env = make_env()
    t = by_id("pay-alice")
    # the gold call made twice as two deposits of half: same balance, but the log differs
    halves = actions_transcript(
        t, [("deposit", {"name": "alice", "amount": 2}), ("deposit", {"name": "alice", "amount": 3})]
    )
    assert not (await env.grade(t, rollout(t, halves))).passed
    again = actions_transcript(t, [("deposit", {"name": "alice", "amount": 5})])
    time.sleep(0.01)  # another timestamp in the log's volatile column
    assert (await env.grade(t, rollout(t, again))).passed


async def test_failed_calls_are_not_replayed() -> None:
    env = make_env()
    t = by_id("pay-alice")
    messages = actions_transcript(
        t, [("deposit", {"name": "alice", "amount": 5}), ("deposit", {"name": "alice", "amount": 9})]
    )
    # the runner answered the second call with an error: it changed nothing, so the grade ignores it
    messages[-2] = Message(role="tool", content="error: timed out", tool_call_id="call_1", name="deposit")
    assert (await env.grade(t, rollout(t, messages))).passed


async def test_required_actions_and_the_answer_are_checked() -> None:
    env = make_env()
    t = by_id("fix-carol")
    no_lookup = actions_transcript(t, [("set_balance", {"name": "carol", "value": 3})], final="carol has 3")
    grade = await env.grade(t, rollout(t, no_lookup))
    assert not grade.passed and {c.name: c.passed for c in grade.checks} == {
        "state": True,
        "required_actions": False,
        "answer": True,
    }
    silent = actions_transcript(
        t, [("balance", {"name": "carol"}), ("set_balance", {"name": "carol", "value": 3})], final="done"
    )
    grade = await env.grade(t, rollout(t, silent))
    assert not grade.passed and "answer" in grade.reason


async def test_forbidden_actions_and_the_mean_rule() -> None:
    t = task(
        "careful",
        [("deposit", {"name": "bob", "amount": 1})],
        forbidden_actions=(Action(name="balance", arguments={"name": "alice"}),),
        rule="mean",
    )
    env = make_env([t])
    sneaky = actions_transcript(
        t, [("balance", {"name": "alice"}), ("deposit", {"name": "bob", "amount": 1})]
    )
    grade = await env.grade(t, rollout(t, sneaky))
    assert not grade.passed and grade.score == pytest.approx(0.5)  # the state is right, a lookup is not
    assert (await env.grade(t, rollout(t, gold_messages(t, None)))).score == 1.0


def test_a_task_must_declare_a_state_or_action_requirement() -> None:
    with pytest.raises(ValidationError):
        StateRequirements(gold_actions=(), check_state=False, answer="42")


def test_executed_actions_skip_errors_and_unparsable_arguments() -> None:
    calls = (
        ToolCall(id="a", name="deposit", arguments='{"name": "bob", "amount": 1}'),
        ToolCall(id="b", name="deposit", arguments="{not json"),
        ToolCall(id="c", name="boom", arguments="{}"),
    )
    messages = [
        Message(role="assistant", tool_calls=calls),
        Message(role="tool", content="ok", tool_call_id="a"),
        Message(role="tool", content="ok", tool_call_id="b"),
        Message(role="tool", content="error: RuntimeError", tool_call_id="c"),
    ]
    assert executed_actions(messages) == [Action(name="deposit", arguments={"name": "bob", "amount": 1})]


def test_action_matching_needs_every_named_argument() -> None:
    done = Action(name="deposit", arguments={"name": "bob", "amount": 1})
    assert action_matches(done, Action(name="deposit", arguments={"amount": 1.0}))
    assert not action_matches(done, Action(name="deposit", arguments={"amount": 2}))
    assert not action_matches(done, Action(name="deposit", arguments={"memo": "x"}))
    assert not action_matches(done, Action(name="set_balance"))


def test_gold_messages_interleave_calls_and_results() -> None:
    t = by_id("fix-carol")
    messages = gold_messages(t, "sys", results=["r0", "r1"])
    roles = [m.role for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [m.content for m in messages if m.role == "tool"] == ["r0", "r1"]
    assert json.loads(messages[2].tool_calls[0].arguments) == {"name": "carol"}  # type: ignore[index]
    assert messages[-1].content == "carol has 3"
