"""Grading recorded rollouts again with a package's own grader, sandboxed.

``verify-submission`` uses it to confirm that the rewards in a bundle are the ones the bundled
grader gives (the summary is checked against the rollouts separately, in :mod:`hub.review.submit`).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hub.review.check.report import CheckReport
from hub.review.check.runner import CheckOptions, _run_worker, _stage_path
from hub.review.check.sandbox import make_writable

__all__ = ["RegradeResult", "regrade_sandboxed"]


@dataclass
class RegradeResult:
    """``graded`` rollouts were graded again; ``differ`` lists verdicts that changed."""

    graded: int = 0
    differ: list[str] = field(default_factory=list)
    n_differ: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.n_differ == 0


def regrade_sandboxed(
    source: Path,
    rollouts: Path,
    *,
    env_id: str,
    split: str,
    seed: int,
    num_tasks: int,
    options: CheckOptions | None = None,
) -> RegradeResult:
    """Build ``source`` offline and regrade ``rollouts`` in the check's sandbox."""
    opts = options or CheckOptions()
    work = Path(tempfile.mkdtemp(prefix="verihub-regrade-"))
    try:
        stage = _stage_path(source.resolve(), work, opts, CheckReport(target=str(source)))
        if stage is None:
            return RegradeResult(error="the package does not build")
        extra = {"rollouts": str(rollouts), "split": split, "seed": seed, "eval_num_tasks": num_tasks}
        res, events = _run_worker("regrade", stage, work, env_id, opts, seed=0, extra=extra)
        found = next((ev for ev in events if ev["event"] == "regrade"), None)
        if found is None:
            hang = next((ev for ev in events if ev["event"] == "hang"), None)
            why = (
                f"grading {hang['label']} hung" if hang else f"the process ended (exit code {res.returncode})"
            )
            return RegradeResult(error=f"regrading did not finish: {why}")
        return RegradeResult(graded=found["graded"], differ=list(found["differ"]), n_differ=found["n_differ"])
    finally:
        make_writable(work)
        shutil.rmtree(work, ignore_errors=True)
