"""One re-verification of a pushed run, in its own process:
``python -m hub.server.results.reverify_child ARCHIVE WHEEL WHEEL_NAME OUT [--share S] [--tasks TASKS]``.

The run archive is unpacked with tarfile's ``data`` filter. A sample of the rollouts that carry a
verdict (:func:`sample_size`) is drawn with :class:`secrets.SystemRandom` now, so the pusher cannot
know which will be checked, and graded again by the version's own wheel in the sandbox
(:func:`hub.review.check.regrade.regrade_sandboxed`). The outcome, written to OUT as JSON, is
``verified`` when every verdict agrees, ``unverified`` when one differs and ``error`` when the
regrade could not be done.

The same sandboxed environment also lists its tasks: those with the run's ids go to TASKS as
JSON lines (:func:`hub.server.results.band_tasks.dump_tasks`), for the band export. They are the
package's output, so each is validated as a ``Task``; past
:data:`~hub.server.results.band_tasks.MAX_TASKS_BYTES` none are written (``tasks_skipped``).
"""

from __future__ import annotations

import json
import math
import random
import secrets
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hub.env import Rollout, UsageError
from hub.review import CheckOptions, RegradeResult, regrade_sandboxed
from hub.run import RunDir
from hub.server.core import UNVERIFIED, VERIFIED, VERIFY_ERROR, Limits
from hub.server.results.band_tasks import MAX_TASKS_BYTES, dump_tasks
from hub.server.results.runpack import unpack_run

__all__ = ["MIN_SAMPLE", "draw_sample", "reverify_run", "sample_size"]

#: How far into a split the regrade looks for a shuffled run's (or an unbounded run's) task ids;
#: it stops as soon as it has found them all, and a forged id in an endless stream stops here.
SCAN_CAP = 1_000_000

#: Runs with at most this many gradable rollouts are checked in full; larger ones at least this many.
MIN_SAMPLE = 20


def sample_size(total: int, share: float) -> int:
    """All of ``total`` when it is at most :data:`MIN_SAMPLE`, else ``max(MIN_SAMPLE,
    ceil(share * total))`` capped at ``total``."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the re-verification share must be between 0 and 1, not {share}")
    if total <= MIN_SAMPLE:
        return max(total, 0)
    return min(total, max(MIN_SAMPLE, math.ceil(share * total)))


def draw_sample(keys: Sequence[str], share: float, rng: random.Random | None = None) -> list[str]:
    """The keys to check, drawn with ``rng`` (an unpredictable :class:`secrets.SystemRandom` by
    default), in their original order."""
    chosen = set((rng or secrets.SystemRandom()).sample(list(keys), sample_size(len(keys), share)))
    return [k for k in keys if k in chosen]


def _gradable(run: Path) -> tuple[dict[str, tuple[bytes, Rollout]], set[str]]:
    """``task#index`` -> (the recorded line, its rollout) for every rollout with a verdict to check,
    and the task ids of every rollout."""
    out: dict[str, tuple[bytes, Rollout]] = {}
    task_ids: set[str] = set()
    for line in (run / "rollouts.jsonl").read_bytes().splitlines():
        if not line.strip():
            continue
        rec = Rollout.model_validate_json(line)
        task_ids.add(rec.task_id)
        if rec.error is not None and rec.error.kind != "grader":
            continue  # the model or the environment failed: no verdict was recorded
        out[f"{rec.task_id}#{rec.rollout_index}"] = (line, rec)
    return out, task_ids


def _outcome(result: RegradeResult, records: dict[str, tuple[bytes, Rollout]]) -> tuple[str, list[str], int]:
    """(state, differing verdicts, how many differ) from the regrade's result."""
    differ, n_differ = list(result.differ), result.n_differ
    hung = records.get(result.hung)
    if hung is not None and hung[1].error is None:  # a response that now hangs the grader
        rec = hung[1]
        differ.append(
            f"{result.hung}: recorded passed={rec.passed} reward={rec.reward}, the grader now hangs"
        )
        n_differ += 1
    if n_differ:
        return UNVERIFIED, differ[:20], n_differ
    return (VERIFY_ERROR if result.error is not None else VERIFIED), differ, n_differ


def reverify_run(
    archive: Path,
    wheel: Path,
    *,
    share: float,
    wheel_name: str = "",
    rng: random.Random | None = None,
    tasks_out: Path | None = None,
) -> tuple[str, dict[str, Any]]:
    """Re-verify the run in ``archive`` with ``wheel`` (stored under any name: ``wheel_name`` is
    its real file name); returns (state, report). With ``tasks_out`` the environment's tasks of
    the run are written there (see the module docstring)."""
    report: dict[str, Any] = {"share": share, "error": None}
    with tempfile.TemporaryDirectory(prefix="verihub-reverify-") as tmp:
        run = unpack_run(archive, Path(tmp) / "run", Limits())  # the reader that took the push
        config = RunDir(run).load_config()
        records, task_ids = _gradable(run)
        sample = draw_sample(list(records), share, rng)
        report.update(
            rollouts=sum(1 for ln in (run / "rollouts.jsonl").read_bytes().splitlines() if ln.strip()),
            total=len(records),
            sampled=len(sample),
            sampled_keys=sample,
        )
        picked = Path(tmp) / "sampled.jsonl"
        picked.write_bytes(b"".join(records[k][0] + b"\n" for k in sample))
        staged = Path(tmp) / Path(wheel_name or wheel.name).name
        shutil.copyfile(wheel, staged)
        env_args = {k: v for k, v in config.env_args.items() if k not in config.location_args}
        exact = config.num_tasks is not None and not config.shuffle
        try:
            result = regrade_sandboxed(
                staged,
                picked,
                env_id=config.env_id,
                split=config.split,
                seed=config.seed,
                num_tasks=config.num_tasks if exact and config.num_tasks is not None else SCAN_CAP,
                options=CheckOptions(env_args=env_args),
                keep_tasks=frozenset(task_ids) if tasks_out is not None else frozenset(),
            )
        except UsageError as exc:  # no sandbox here (bubblewrap missing or refused): nothing was graded
            result = RegradeResult(error=str(exc))
    state, differ, n_differ = _outcome(result, records)
    report.update(graded=result.graded, n_differ=n_differ, differ=differ)
    if state == VERIFY_ERROR:
        report["error"] = result.error
    if tasks_out is not None:
        report.update(_write_tasks(result, task_ids, tasks_out))
    return state, report


def _write_tasks(result: RegradeResult, task_ids: set[str], out: Path) -> dict[str, Any]:
    """Write the environment's tasks of the run to ``out``; what the report says about them."""
    if not result.tasks:
        return {"n_tasks": 0}
    data = dump_tasks(result.tasks, task_ids, cap=MAX_TASKS_BYTES)
    if data is None:
        return {
            "n_tasks": 0,
            "tasks_skipped": f"the environment's tasks of this run exceed {MAX_TASKS_BYTES >> 20} MiB; "
            "the band export keeps the rollouts' prompts",
        }
    out.write_bytes(data)
    return {"n_tasks": data.count(b"\n")}


def main(argv: list[str]) -> int:
    archive, wheel, wheel_name, out = Path(argv[0]), Path(argv[1]), argv[2], Path(argv[3])
    share = float(argv[argv.index("--share") + 1]) if "--share" in argv else 0.1
    tasks_out = Path(argv[argv.index("--tasks") + 1]) if "--tasks" in argv else None
    try:
        state, report = reverify_run(archive, wheel, share=share, wheel_name=wheel_name, tasks_out=tasks_out)
    except Exception as exc:  # the report says what broke; the worker records it as an error
        state, report = VERIFY_ERROR, {"share": share, "error": f"{type(exc).__name__}: {exc}"}
    out.write_text(json.dumps({"state": state, "report": report}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
