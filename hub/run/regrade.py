"""``verihub regrade``: grade the saved rollouts of a run again, without calling the model.

The new grades go to a new file that is swapped in atomically; the file they replace is kept
under ``regrades/<time>-regrade.jsonl``. A regrade holds the run's writer lock, so it is
refused while an evaluation (or another regrade) writes the run.
"""

from __future__ import annotations

import os
import time

from hub.env import Rollout, RunDirError, grade_rollout, with_grade, with_metrics
from hub.registry import load_environment
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.rundir import RunConfig, RunDir

__all__ = ["finish_regrade", "regrade"]


async def regrade(out: str | os.PathLike[str], *, grade_timeout_s: float = 60.0) -> tuple[Summary, int]:
    """Re-grade the saved rollouts of ``out`` with the installed grader; no model calls.

    Rollouts whose model call failed stay as they are. Refused while another process writes
    the run. The new grades go to a new file swapped in atomically; the previous file is kept
    under ``regrades/``. Returns the new summary and the number of rollouts whose verdict changed.
    """
    rundir = RunDir(out)
    config = rundir.load_config()
    with rundir.writing("regrade"):
        env = load_environment(config.env_id, **config.env_args)
        try:
            tasks = {t.id: t for t in config.task_selection(env)}
            rundir.repair()
            old = list(rundir.iter_rollouts())
            missing = sorted({r.task_id for r in old} - set(tasks))
            if missing:
                raise RunDirError(
                    f"{out}: task {missing[0]!r} is no longer in {config.env_id}; cannot regrade"
                )
            new = []
            for r in old:
                if r.error is None or r.error.kind == "grader":
                    blank = {"error": None, "grade": None, "reward": None, "passed": False}
                    base = r.model_copy(update=blank)
                    started = time.perf_counter()
                    grade = await grade_rollout(env, tasks[r.task_id], base, timeout_s=grade_timeout_s)
                    graded = with_grade(base, grade, time.perf_counter() - started)
                    r = with_metrics(env, tasks[r.task_id], graded)
                new.append(r)
        finally:
            await env.aclose()
        return finish_regrade(rundir, config, env.version, list(tasks), old, new)


def finish_regrade(
    rundir: RunDir,
    config: RunConfig,
    env_version: str,
    task_ids: list[str],
    old: list[Rollout],
    new: list[Rollout],
) -> tuple[Summary, int]:
    """Swap in the regraded rollouts (keeping the old file in ``regrades/``) and write the summary.

    Call with the writer lock held. Returns the summary and how many verdicts changed."""
    changed = sum(
        (a.reward, a.passed, a.error) != (b.reward, b.passed, b.error) for a, b in zip(old, new, strict=True)
    )
    rundir.replace_rollouts(new, reason="regrade")
    builder = SummaryBuilder(
        env_id=config.env_id,
        env_version=env_version,
        model=config.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for tid in task_ids:
        builder.add_task(tid)
    summary = builder.extend(new).build()
    rundir.write_summary(summary)
    return summary, changed
