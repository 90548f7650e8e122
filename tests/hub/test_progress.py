"""The run's progress bar counts every rollout, though it is redrawn only now and then."""

from __future__ import annotations

import io

from rich.console import Console

from hub.cli.progress import RunProgress
from hub.env.types import Message, Rollout, Timing
from hub.run.metrics import SummaryBuilder


def test_the_bar_ends_with_every_rollout_counted() -> None:
    builder = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=1)
    bar = RunProgress(console=Console(file=io.StringIO(), force_terminal=False))
    with bar:
        bar.start(total=500, done=3)
        for i in range(497):
            r = Rollout(
                task_id=f"t{i}",
                rollout_index=0,
                messages=[Message(role="assistant", content="a")],
                timing=Timing(started_at=0.0),
                reward=1.0 if i % 2 else 0.0,
                passed=bool(i % 2),
            )
            builder.add(r)
            bar.update(r, builder)
        task = bar._progress.tasks[0]
        assert task.completed <= 500
    assert task.completed == 500
    assert task.fields["errors"] == 0 and task.fields["mean"] == f"{248 / 497:.3f}"


def test_a_disabled_bar_counts_nothing() -> None:
    bar = RunProgress(enabled=False)
    with bar:
        bar.start(total=10, done=0)
        builder = SummaryBuilder(env_id="e", env_version="1", model="m", rollouts_per_task=1)
        r = Rollout(task_id="t", rollout_index=0, messages=[], timing=Timing(started_at=0.0))
        bar.update(r, builder)
    assert bar._progress.tasks == []
