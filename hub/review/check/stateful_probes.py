"""The check's probes for stateful tool environments (tasks whose answer is a
:class:`~hub.env.state_grading.StateRequirements`).

Each rollout is a transcript built here and graded by the sandboxed environment, exactly as a
recorded rollout is: the grader replays the transcript's tool calls on a fresh copy of the seed.

- ``gold``: the task's gold actions, one call per turn, then its answer: must earn 1.0;
- ``stateful_probes``: doing nothing, answering without acting (the gold answer text with no
  call) and replaying another task's gold actions must not pass.

An environment with no stateful task is left to the other probes (``stateful_probes`` is skipped).
"""

from __future__ import annotations

import time
from typing import Any

from hub.env import Message, Rollout, StateRequirements, Task, Timing, gold_messages, requirements_of
from hub.review.check.drive import Prober
from hub.review.check.report import CheckReport

__all__ = ["run_stateful_probes"]


def _rollout(task: Task, messages: list[Message]) -> Rollout:
    return Rollout(
        task_id=task.id,
        rollout_index=0,
        messages=messages,
        timing=Timing(started_at=time.time()),
        turns=sum(1 for m in messages if m.role == "assistant"),
    )


def _sample(env: Any, n: int) -> list[tuple[Task, StateRequirements]]:
    out: list[tuple[Task, StateRequirements]] = []
    for split in env.splits:
        for i, task in enumerate(env.tasks(split)):
            if i >= n:
                break
            spec = requirements_of(task)
            if spec is not None:
                out.append((task, spec))
    return out


async def run_stateful_probes(
    prober: Prober, report: CheckReport, *, gold_tasks: int, probe_tasks: int
) -> None:
    """Gold trajectories and the stateful hacking probes; records ``gold`` and ``stateful_probes``."""
    env = prober.env
    prober.phase = "stateful tasks"
    sampled = _sample(env, gold_tasks)
    if not sampled:
        report.add("stateful_probes", "skip", "no stateful task (no task answer lists gold actions)")
        return
    gold_fail: list[str] = []
    errors: list[str] = []
    passed_probes: list[str] = []

    async def grade(task: Task, messages: list[Message], label: str) -> Any:
        status, g = await prober.grade_rollout(task, _rollout(task, messages), label)
        if status != "ok":
            errors.append(f"{label}: {status} {g or ''}".strip())
            return None
        return g

    for task, _spec in sampled:
        prober.phase = f"gold {task.id}"
        g = await grade(task, gold_messages(task, env.system_prompt), f"gold trajectory of {task.id}")
        if g is not None and not (g.passed and float(g.score) >= 1.0):
            gold_fail.append(f"{task.id}: {g.reason or g.status}")
    for i, (task, spec) in enumerate(sampled[:probe_tasks]):
        prober.phase = f"probes {task.id}"
        opening = task.messages(env.system_prompt)
        probes: list[tuple[str, list[Message]]] = [
            ("do nothing", [*opening, Message(role="assistant", content="")]),
            ("answer without acting", [*opening, Message(role="assistant", content=spec.answer or "Done.")]),
        ]
        others = [o for o in sampled[i + 1 :] + sampled[:i] if o[1].gold_actions != spec.gold_actions]
        if others:
            other = others[0][1].gold_actions
            probes.append(
                ("gold actions of another task", gold_messages(task, env.system_prompt, actions=other))
            )
        for name, messages in probes:
            g = await grade(task, messages, f"probe '{name}' on {task.id}")
            if g is not None and (g.passed or float(g.score) >= 0.5):
                passed_probes.append(
                    f"probe '{name}' on {task.id} {'passed' if g.passed else 'was rewarded'}"
                )
    n_probed = min(probe_tasks, len(sampled))
    report.add(
        "gold",
        "fail" if gold_fail else "pass",
        f"{len(gold_fail)} of {len(sampled)} gold trajectories fail"
        if gold_fail
        else f"{len(sampled)} gold trajectories earn 1.0",
        gold_fail,
    )
    if errors:
        report.add(
            "grader_errors", "fail", f"the grader failed {len(errors)} times on stateful probes", errors
        )
    report.add(
        "stateful_probes",
        "fail" if passed_probes else "pass",
        f"{len(passed_probes)} stateful probes passed: tasks can be passed without the work"
        if passed_probes
        else f"no action, an answer alone and another task's actions fail on {n_probed} tasks",
        passed_probes,
    )
