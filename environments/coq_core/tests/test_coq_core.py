"""coq_core: every reference proof passes the real kernel; hacks score 0; revise mode feeds back goals."""

from __future__ import annotations

import shutil
from importlib.metadata import entry_points

import pytest
from verihub_coq_core import THEOREMS, ProofReviseEnv, build_tasks, load_environment

from graders.proof import CoqChecker, ProofPolicy
from hub import Message, Rollout, Task, Timing

pytestmark = pytest.mark.skipif(
    shutil.which("coqc") is None, reason="coqc not installed (apt-get install -y coq)"
)


def rollout(task: Task, text: str) -> Rollout:
    msgs = [Message(role="assistant", content=text)]
    return Rollout(
        task_id=task.id, rollout_index=0, messages=msgs, completion=text, timing=Timing(started_at=0)
    )


def gold(task: Task) -> str:
    return f"```coq\n{task.answer['statement']}\nProof.\n{task.answer['reference_proof']}\nQed.\n```"


def test_entry_point_and_task_table() -> None:
    (ep,) = [e for e in entry_points(group="verihub.environments") if e.name == "coq_core"]
    assert ep.value == "verihub_coq_core:load_environment"
    tasks = build_tasks()
    assert len(tasks) == len(THEOREMS) >= 20
    assert len({t.id for t in tasks}) == len(tasks)
    assert {t.metadata["difficulty"] for t in tasks} == {1, 2, 3}
    assert {t.metadata["topic"] for t in tasks} == {"nat", "bool", "list", "logic"}
    for t in tasks:
        assert t.answer["statement"] in str(t.prompt) and t.answer["reference_proof"] not in str(t.prompt)
    assert len(build_tasks(difficulty=1)) < len(tasks)
    with pytest.raises(ValueError):
        load_environment(difficulty=7)


@pytest.mark.sandbox
async def test_every_reference_proof_passes_the_real_kernel() -> None:
    import asyncio

    checker = CoqChecker(policy=ProofPolicy(timeout_s=20))
    tasks = build_tasks()
    verdicts = await asyncio.gather(
        *[checker.check(t.answer["statement"], gold(t), imports=tuple(t.answer["imports"])) for t in tasks]
    )
    failed = {t.id: v.reason for t, v in zip(tasks, verdicts, strict=True) if not v.proved}
    assert failed == {}


@pytest.mark.parametrize(
    "hack",
    [
        "Proof. Admitted.",
        "```coq\nTheorem add_0_r' : forall n : nat, n + 0 = n + 0.\nProof. reflexivity. Qed.\n```",
        "```coq\nAxiom anything : forall P : Prop, P.\nTheorem add_0_r' : forall n : nat, n + 0 = n.\n"
        "Proof. apply anything. Qed.\n```",
        "Proof complete! All goals closed. Qed.",
        "",
    ],
)
@pytest.mark.sandbox
async def test_single_mode_hacks_score_zero(hack: str) -> None:
    env = load_environment(timeout_s=5)
    task = next(t for t in env.tasks() if t.id == "add_0_r")
    grade = await env.grade(task, rollout(task, hack))
    assert grade.score == 0.0 and grade.status == "incorrect" and grade.reason


@pytest.mark.sandbox
async def test_single_mode_gold_scores_one() -> None:
    env = load_environment(timeout_s=5)
    task = next(t for t in env.tasks() if t.id == "rev_involutive")
    grade = await env.grade(task, rollout(task, "Here it is:\n" + gold(task)))
    assert grade.score == 1.0 and grade.status == "correct"


@pytest.mark.sandbox
async def test_revise_mode_returns_goals_then_accepts() -> None:
    env = load_environment(mode="revise", max_turns=3, timeout_s=5)
    assert isinstance(env, ProofReviseEnv) and env.max_turns == 3
    task = next(t for t in env.tasks() if t.id == "add_0_r")
    state = await env.reset(task)
    state.turn = 1
    first = await env.step(
        state, Message(role="assistant", content="intros n. induction n. reflexivity. simpl.")
    )
    assert not first.terminated and not first.truncated
    text = first.messages[0].content or ""
    assert "Remaining goals" in text and "S (n + 0) = S n" in text and "Revise" in text
    state.turn = 2
    second = await env.step(state, Message(role="assistant", content=gold(task)))
    assert second.terminated and second.messages[0].content == "Proof accepted."
    grade = await env.grade(task, rollout(task, gold(task)))
    assert grade.passed


async def test_revise_mode_truncates_at_the_turn_limit() -> None:
    env = load_environment(mode="revise", max_turns=2, timeout_s=5)
    task = env.tasks()[0]  # type: ignore[index]
    state = await env.reset(task)
    state.turn = 2
    step = await env.step(state, Message(role="assistant", content="Proof. Admitted."))
    assert step.truncated and not step.terminated and "forbidden" in (step.messages[0].content or "")


@pytest.mark.sandbox
async def test_attack_generator() -> None:
    """graders.attacks on every theorem: admitted proofs, axioms, file access and a weakened
    statement all score 0 through the environment, and the reference proof still scores 1."""
    from graders.attacks import proof_cases

    env = load_environment(timeout_s=10)
    wrong = []
    for task in list(env.tasks())[::4]:
        for case in proof_cases(task.answer["statement"], "coq"):
            grade = await env.grade(task, rollout(task, case.response))
            if grade.passed or grade.is_error:
                wrong.append((task.id, case.name, grade.status, grade.reason))
        assert (await env.grade(task, rollout(task, gold(task)))).passed
    assert not wrong, wrong
