"""The sandboxed regrade's comparison rules (hub.review.check.regrade), on a scripted prober:
a rollout that timed out when it was run and times out again agrees (its recorded 0 stands);
a recorded pass that now times out, or a recorded timeout that now passes, differs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hub.env.types import Grade, Message, Rollout, Task, Timing
from hub.review.check.regrade import _regrade


class _Env:
    def tasks(self, split: str, *, seed: int = 0) -> Any:
        return iter([Task(id=f"t{i}", prompt=f"q{i}", answer="1") for i in range(3)])


class _Prober:
    def __init__(self, answers: dict[str, tuple[str, Any]]) -> None:
        self.answers = answers

    async def grade_rollout(self, task: Task, rollout: Rollout, label: str) -> tuple[str, Any]:
        return self.answers[label]


def _rollout(task_id: str, grade: Grade) -> Rollout:
    return Rollout(
        task_id=task_id,
        rollout_index=0,
        messages=[Message(role="user", content="q"), Message(role="assistant", content="a")],
        completion="a",
        reward=grade.score,
        passed=grade.passed,
        grade=grade,
        timing=Timing(started_at=1.0),
        turns=1,
    )


def test_a_timeout_then_and_now_agrees_but_a_pass_that_now_times_out_differs(tmp_path: Path) -> None:
    timed_out = Grade.incorrect(reason="timeout: grader exceeded 2s on this response")
    rollouts = [
        _rollout("t0", timed_out),  # timed out then, times out now: agrees
        _rollout("t1", Grade.from_score(1.0, reason="ok")),  # passed then, times out now: differs
        _rollout("t2", timed_out),  # timed out then, passes now: differs
    ]
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in rollouts), encoding="utf-8")
    prober = _Prober(
        {
            "t0#0": ("timeout", None),
            "t1#0": ("timeout", None),
            "t2#0": ("ok", Grade.from_score(1.0, reason="ok")),
        }
    )
    result = asyncio.run(_regrade(_Env(), path, prober, "test", 0, 3))  # type: ignore[arg-type]
    assert result.graded == 3
    assert result.n_differ == 2
    assert result.differ[0].startswith("t1#0: recorded reward 1.0, the grader now fails (timeout)")
    assert result.differ[1].startswith("t2#0: recorded passed=False reward=0.0, regraded passed=True")


class _Endless:
    def tasks(self, split: str, *, seed: int = 0) -> Any:
        i = 0
        while True:  # a procedural split without end, as arith's
            yield Task(id=f"t{i}", prompt=f"q{i}", answer="1")
            i += 1


def test_a_shuffled_runs_tasks_are_found_in_an_endless_stream_without_reading_it_all(tmp_path: Path) -> None:
    ok = Grade.from_score(1.0, reason="ok")
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(_rollout(t, ok).model_dump_json() + "\n" for t in ("t7", "t2")), encoding="utf-8")
    prober = _Prober({"t7#0": ("ok", ok), "t2#0": ("ok", ok)})
    result = asyncio.run(_regrade(_Endless(), path, prober, "test", 0, 10**12, keep_tasks=["t2", "t7"]))  # type: ignore[arg-type]
    assert result.graded == 2 and result.n_differ == 0
    assert [t.id for t in result.tasks] == ["t2", "t7"]  # the environment's order
