"""Grading one corrected rollout in its own process:
``python -m hub.server.results.correction_child ARCHIVE WHEEL WHEEL_NAME ROLLOUT OUT``.

The run archive gives the environment's id, arguments, split, seed and task count; the
corrected rollout (one :class:`~hub.env.types.Rollout` as JSON, in ROLLOUT) is graded by the
version's wheel in the sandbox (:func:`hub.review.check.regrade.grade_sandboxed`), as
re-verification grades. ``{"state": "graded"|"error", "grade": {...}|null, "error": "..."}`` is
written to OUT as JSON.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hub.env.errors import UsageError
from hub.env.types import Rollout
from hub.review.check import CheckOptions
from hub.review.check.regrade import grade_sandboxed
from hub.run.rundir import RunDir
from hub.server.core.config import Limits
from hub.server.results.reverify_child import SCAN_CAP
from hub.server.results.runpack import unpack_run

__all__ = ["grade_correction"]


def grade_correction(archive: Path, wheel: Path, wheel_name: str, rollout: Rollout) -> dict[str, Any]:
    """The outcome of grading ``rollout`` with ``wheel`` for the run in ``archive``."""
    with tempfile.TemporaryDirectory(prefix="verihub-correction-") as tmp:
        run = unpack_run(archive, Path(tmp) / "run", Limits())
        config = RunDir(run).load_config()
        staged = Path(tmp) / Path(wheel_name or wheel.name).name
        shutil.copyfile(wheel, staged)
        env_args = {k: v for k, v in config.env_args.items() if k not in config.location_args}
        exact = config.num_tasks is not None and not config.shuffle
        try:
            result = grade_sandboxed(
                staged,
                [rollout],
                env_id=config.env_id,
                split=config.split,
                seed=config.seed,
                num_tasks=config.num_tasks if exact and config.num_tasks is not None else SCAN_CAP,
                options=CheckOptions(env_args=env_args),
            )
        except UsageError as exc:  # no sandbox here
            return {"state": "error", "grade": None, "error": str(exc)}
    if result.error is not None or not result.grades:
        return {"state": "error", "grade": None, "error": result.error or "nothing was graded"}
    status, grade = result.grades[0]
    if status == "ok":
        return {"state": "graded", "grade": grade.model_dump(mode="json"), "error": ""}
    return {"state": "error", "grade": None, "error": f"{status}: {grade}"}


def main(argv: list[str]) -> int:
    archive, wheel, wheel_name, rollout, out = (
        Path(argv[0]),
        Path(argv[1]),
        argv[2],
        Path(argv[3]),
        Path(argv[4]),
    )
    try:
        outcome = grade_correction(
            archive, wheel, wheel_name, Rollout.model_validate_json(rollout.read_bytes())
        )
    except Exception as exc:  # the outcome says what broke; the hub records it as an error
        outcome = {"state": "error", "grade": None, "error": f"{type(exc).__name__}: {exc}"}
    out.write_text(json.dumps(outcome), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
