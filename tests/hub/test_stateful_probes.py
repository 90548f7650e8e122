"""The check's stateful probes: gold trajectories must pass; doing nothing, answering only and
another task's gold actions must not."""

from __future__ import annotations

from typing import Any

from graders.grade import Grade
from hub.env import Rollout, StatefulToolEnv, Task
from hub.review.check.drive import Prober
from hub.review.check.report import CheckReport
from hub.review.check.stateful_probes import run_stateful_probes
from tests.hub.stateful_kit import TASKS, make_env, task


async def probe(env: Any) -> CheckReport:
    report = CheckReport(target="test")
    await run_stateful_probes(
        Prober(env, timeout_s=10.0, memory_mb=512), report, gold_tasks=10, probe_tasks=10
    )
    return report


async def test_a_sound_stateful_environment_passes() -> None:
    report = await probe(make_env())
    assert report.result("gold").status == "pass"  # type: ignore[union-attr]
    assert report.result("stateful_probes").status == "pass", report.to_text()  # type: ignore[union-attr]


async def test_tasks_that_pass_by_doing_nothing_are_refused() -> None:
    lookups = [task(f"look-{n}", [("balance", {"name": n})]) for n in ("alice", "bob")]
    report = await probe(make_env(lookups))
    result = report.result("stateful_probes")
    assert result is not None and result.status == "fail"
    assert any("do nothing" in d for d in result.details)


async def test_a_grader_that_ignores_the_state_is_refused() -> None:
    class Lenient(StatefulToolEnv):
        async def grade(self, task: Task, rollout: Rollout) -> Grade:
            return Grade.correct()

    base = make_env()
    env = Lenient(tools=[], tasks=TASKS, seed=base.seed_for(TASKS[0]), verify_gold=None)
    report = await probe(env)
    result = report.result("stateful_probes")
    assert result is not None and result.status == "fail"
    assert {d.split("'")[1] for d in result.details} == {
        "do nothing",
        "answer without acting",
        "gold actions of another task",
    }


async def test_tasks_with_the_same_effect_pass_each_others_actions_and_are_refused() -> None:
    twins = [
        task("a", [("deposit", {"name": "alice", "amount": 5})]),
        task("b", [("balance", {"name": "bob"}), ("deposit", {"name": "alice", "amount": 5})]),
    ]
    result = (await probe(make_env(twins))).result("stateful_probes")
    assert result is not None and result.status == "fail"
    assert any("of another task" in d for d in result.details)


async def test_a_broken_gold_fails_the_gold_check() -> None:
    class Wrong(StatefulToolEnv):
        async def grade(self, task: Task, rollout: Rollout) -> Grade:
            return Grade.incorrect(reason="never")

    base = make_env()
    env = Wrong(tools=[], tasks=TASKS, seed=base.seed_for(TASKS[0]), verify_gold=None)
    result = (await probe(env)).result("gold")
    assert result is not None and result.status == "fail"


async def test_an_environment_without_stateful_tasks_is_left_alone() -> None:
    class Plain:
        splits = ("test",)
        system_prompt = None

        def tasks(self, split: str = "test", *, seed: int = 0) -> list[Task]:
            return [Task(id="t", prompt="2+2?", answer="4")]

    report = await probe(Plain())
    assert [(r.name, r.status) for r in report.results] == [("stateful_probes", "skip")]
