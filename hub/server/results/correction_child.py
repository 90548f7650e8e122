"""Grading one corrected rollout in its own process:
``python -m hub.server.results.correction_child ARCHIVE WHEEL WHEEL_NAME ROLLOUT OUT [--rerun]``.

The run archive gives the environment's id, arguments, split, seed and task count; the
corrected rollout (one :class:`~hub.env.types.Rollout` as JSON, in ROLLOUT) is graded by the
version's wheel in the sandbox (:func:`hub.review.check.regrade.grade_sandboxed`), as
re-verification grades. With ``--rerun``, ROLLOUT holds ``{"original": rollout, "actions":
[assistant messages]}``: the environment is re-run on the edited actions and the transcript it
makes is graded (:func:`hub.review.check.regrade.replay_sandboxed`; refused unless the
environment replays the original rollout exactly). ``{"state": "graded"|"error", "grade":
{...}|null, "error": "...", "refused": "...", "messages": [...]}`` is written to OUT as JSON.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hub.env import Message, Rollout, UsageError
from hub.review import CheckOptions, RegradeResult, grade_sandboxed, replay_sandboxed
from hub.run import RunDir
from hub.server.core import Limits
from hub.server.results.reverify_child import SCAN_CAP
from hub.server.results.runpack import unpack_run

__all__ = ["grade_correction", "rerun_correction"]


def _run(archive: Path, wheel: Path, wheel_name: str, work: Any) -> RegradeResult:
    """``work(staged_wheel, config, exact_num_tasks, options)`` with the run's settings."""
    with tempfile.TemporaryDirectory(prefix="verihub-correction-") as tmp:
        run = unpack_run(archive, Path(tmp) / "run", Limits())
        config = RunDir(run).load_config()
        staged = Path(tmp) / Path(wheel_name or wheel.name).name
        shutil.copyfile(wheel, staged)
        env_args = {k: v for k, v in config.env_args.items() if k not in config.location_args}
        exact = config.num_tasks is not None and not config.shuffle
        num_tasks = config.num_tasks if exact and config.num_tasks is not None else SCAN_CAP
        try:
            result: RegradeResult = work(staged, config, num_tasks, CheckOptions(env_args=env_args))
        except UsageError as exc:  # no sandbox here
            return RegradeResult(error=str(exc))
    return result


def _outcome(result: RegradeResult) -> dict[str, Any]:
    messages = [m.model_dump(mode="json", exclude_none=True) for m in result.messages]
    if result.refused:
        return {"state": "error", "grade": None, "error": "", "refused": result.refused, "messages": []}
    if result.error is not None or not result.grades:
        return {
            "state": "error",
            "grade": None,
            "error": result.error or "nothing was graded",
            "messages": messages,
        }
    status, grade = result.grades[0]
    if status == "ok":
        return {"state": "graded", "grade": grade.model_dump(mode="json"), "error": "", "messages": messages}
    return {"state": "error", "grade": None, "error": f"{status}: {grade}", "messages": messages}


def grade_correction(archive: Path, wheel: Path, wheel_name: str, rollout: Rollout) -> dict[str, Any]:
    """The outcome of grading ``rollout`` with ``wheel`` for the run in ``archive``."""
    return _outcome(
        _run(
            archive,
            wheel,
            wheel_name,
            lambda staged, config, n, options: grade_sandboxed(
                staged,
                [rollout],
                env_id=config.env_id,
                split=config.split,
                seed=config.seed,
                num_tasks=n,
                options=options,
            ),
        )
    )


def rerun_correction(
    archive: Path, wheel: Path, wheel_name: str, original: Rollout, actions: list[Message]
) -> dict[str, Any]:
    """The outcome of re-running the environment on ``actions`` and grading what it makes."""
    return _outcome(
        _run(
            archive,
            wheel,
            wheel_name,
            lambda staged, config, n, options: replay_sandboxed(
                staged,
                original,
                actions,
                env_id=config.env_id,
                split=config.split,
                seed=config.seed,
                num_tasks=n,
                options=options,
            ),
        )
    )


def main(argv: list[str]) -> int:
    archive, wheel, wheel_name, rollout, out = (
        Path(argv[0]),
        Path(argv[1]),
        argv[2],
        Path(argv[3]),
        Path(argv[4]),
    )
    try:
        if "--rerun" in argv[5:]:
            data = json.loads(rollout.read_bytes())
            original = Rollout.model_validate(data["original"])
            actions = [Message.model_validate(m) for m in data["actions"]]
            outcome = rerun_correction(archive, wheel, wheel_name, original, actions)
        else:
            outcome = grade_correction(
                archive, wheel, wheel_name, Rollout.model_validate_json(rollout.read_bytes())
            )
    except Exception as exc:  # the outcome says what broke; the hub records it as an error
        outcome = {"state": "error", "grade": None, "error": f"{type(exc).__name__}: {exc}"}
    out.write_text(json.dumps(outcome), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
