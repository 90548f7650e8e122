"""Red-team round 2: tampered or inconsistent runs that used to reach a board, and site hazards.

Each test forges a run the way a careful cheat would: the rollouts are edited and ``summary.json``
is recomputed from them with the very ``SummaryBuilder`` the verifier uses, so only the check under
test can catch it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.metrics import SummaryBuilder
from hub.rundir import RunDir
from leaderboard import Board, RunRejected, build_site, verify_run
from leaderboard.testing import write_run

Record = dict[str, Any]


def _forge(run: Path, edit: Callable[[Record], None]) -> Path:
    """Apply ``edit`` to every rollout record, then re-forge a matching summary.json."""
    path = run / "rollouts.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for rec in records:
        edit(rec)
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    _reforge_summary(run)
    return run


def _reforge_summary(run: Path) -> None:
    rundir = RunDir(run)
    config = rundir.load_config()
    old = json.loads((run / "summary.json").read_text())
    builder = SummaryBuilder(
        env_id=config.env_id,
        env_version=config.env_version,
        model=config.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for row in old["per_task"]:
        builder.add_task(row["task_id"])
    builder.extend(rundir.iter_rollouts())
    (run / "summary.json").write_text(builder.build().model_dump_json(indent=2))


def _reasons(run: Path) -> str:
    with pytest.raises(RunRejected) as info:
        verify_run(run)
    assert info.value.reasons
    return " | ".join(info.value.reasons)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


def test_the_forging_helper_alone_keeps_an_honest_run_acceptable(run: Path) -> None:
    verify_run(_forge(run, lambda rec: None))


# -- rollout records that contradict themselves -----------------------------------------------------
def _strip_grade(reward: float, passed: bool) -> Callable[[Record], None]:
    def edit(rec: Record) -> None:
        if rec["error"] is None:
            rec.update(grade=None, reward=reward, passed=passed)

    return edit


@pytest.mark.parametrize(
    ("reward", "passed"), [(1.0, True), (5.0, True), (-3.0, False), (0.0, True)], ids=str
)
def test_reward_without_a_grade_is_refused(run: Path, reward: float, passed: bool) -> None:
    # before: the reward/grade check ran only when a grade was present, so dropping the grades
    # let any reward through (a mean of 5.0, or -3.0, reached the board)
    assert "no valid grade" in _reasons(_forge(run, _strip_grade(reward, passed)))


def test_grader_error_grade_counted_as_a_verdict_is_refused(run: Path) -> None:
    def edit(rec: Record) -> None:
        if rec["error"] is None:
            rec["grade"] = {"score": 0.0, "passed": False, "status": "error", "reason": "grader crashed"}
            rec.update(reward=1.0, passed=True)

    assert "no valid grade" in _reasons(_forge(run, edit))


def test_no_error_and_no_reward_is_refused(run: Path) -> None:
    def edit(rec: Record) -> None:
        if rec["error"] is None and rec["reward"] == 0.0:
            rec.update(reward=None, passed=False)

    assert "no valid grade" in _reasons(_forge(run, edit))


def test_errored_rollout_carrying_a_verdict_is_refused(run: Path) -> None:
    # turning wrong answers into "errors" drops them from the mean; a record that keeps its
    # grade and reward while claiming an error contradicts itself
    def edit(rec: Record) -> None:
        if rec["reward"] == 0.0:
            rec["error"] = {"kind": "model", "message": "HTTP 503"}

    assert "marked as errors yet carry a reward" in _reasons(_forge(run, edit))


def test_genuine_errors_still_pass(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", rewards=((1.0, None), (None, 0.0)))

    def grader_error(rec: Record) -> None:  # a grader failure as the runner records it
        if rec["task_id"] == "t1" and rec["rollout_index"] == 1:
            rec["grade"] = {"score": 0.0, "passed": False, "status": "timeout", "reason": "slow"}
            rec.update(reward=None, passed=False, error={"kind": "grader", "message": "slow"})

    v = verify_run(_forge(run, grader_error))
    assert v.summary.n_errors == 3 and v.summary.mean_reward == 1.0


# -- files that are not files -----------------------------------------------------------------------
def _verify_within(run: Path, seconds: float) -> BaseException | None:
    """verify_run(run) in a thread; the exception it raised, failing the test if it hangs."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            verify_run(run)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"verify_run did not finish within {seconds}s"
    return outcome[0]


def test_rollouts_linked_to_a_device_is_refused_not_read_forever(run: Path) -> None:
    (run / "rollouts.jsonl").unlink()
    (run / "rollouts.jsonl").symlink_to("/dev/zero")
    exc = _verify_within(run, 10)
    assert isinstance(exc, RunRejected) and "rollouts.jsonl is not a regular file" in str(exc)


def test_config_that_is_a_fifo_is_refused_not_waited_on(run: Path) -> None:
    (run / "config.json").unlink()
    os.mkfifo(run / "config.json")
    exc = _verify_within(run, 10)
    assert isinstance(exc, RunRejected) and "config.json is not a regular file" in str(exc)


def test_files_linked_to_regular_files_are_still_read(run: Path, tmp_path: Path) -> None:
    # data-versioning tools (git-annex, DVC) keep run files as links into a cache
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in ("config.json", "summary.json", "rollouts.jsonl"):
        (linked / name).symlink_to(run / name)
    assert verify_run(linked).summary.n_rollouts == 8


# -- the site ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [r"evil $\foo{$ model", "$x$ and $", "_hidden"])
def test_a_model_name_cannot_break_the_plots(tmp_path: Path, model: str) -> None:
    # before: matplotlib parsed "$...$" in labels as mathtext; a bad expression raised and no page
    # of the site could be built
    board = Board(tmp_path / "board")
    board.add(write_run(tmp_path / "r1", model=model))
    board.add(write_run(tmp_path / "r2", model="other", seed=1))
    build_site(board, tmp_path / "site")
    assert (tmp_path / "site" / "index.html").is_file()


def test_plot_labels_are_plain_text() -> None:
    from leaderboard.plots import _short

    assert _short("a $b$") == r"a \$b\$"
    assert not _short("_nolegend_").startswith("_")  # legend() would drop it
