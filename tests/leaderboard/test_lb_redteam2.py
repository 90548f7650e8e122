"""Red team: tampered or inconsistent runs that used to reach a board, and site hazards.

Each test forges a run the way a careful cheat would: the rollouts are edited and ``summary.json``
is recomputed from them with the very ``SummaryBuilder`` the verifier uses, so only the check under
test can catch it.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.run.metrics import SummaryBuilder
from hub.run.rundir import RunDir
from leaderboard import Board, BoardError, RunRejected, aggregate, build_site, verify_run
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


# -- index.json edited by hand ----------------------------------------------------------------------
def _board_with_one_run(tmp_path: Path) -> Board:
    board = Board(tmp_path / "board")
    board.add(write_run(tmp_path / "r", rewards=((1.0, None), (0.0, 0.0), (1.0, 0.5))))
    return board


def _edit_index(board: Board, edit: Callable[[Record], None]) -> None:
    data = json.loads(board.index_path.read_text())
    for entry in data["entries"]:
        edit(entry)
    board.index_path.write_text(json.dumps(data, indent=2))


def test_an_honest_board_has_no_index_disagreements(tmp_path: Path) -> None:
    assert _board_with_one_run(tmp_path).check() == []


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("mean_reward", 0.99, "mean_reward"),
        ("ci95", [0.9, 1.0], "ci95"),
        ("n_errors", 0, "n_errors"),
        ("model", "gpt-famous", "model"),
        ("env_version", "2.0.0", "env_version"),
        ("created_at", 4_000_000_000.0, "created_at"),
        ("pass_at_k", {"1": 1.0, "2": 1.0}, "pass_at_k"),
        ("usage", {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}, "usage"),
        ("bootstrap_resamples", 10**9, "bootstrap resamples"),
    ],
)
def test_index_numbers_must_be_those_of_the_stored_files(
    tmp_path: Path, field: str, value: object, why: str
) -> None:
    # before: build_site checked only the stored files' hashes, so a hand-edited index.json put any
    # number (a 0.99 mean, another model's name) on the pages
    board = _board_with_one_run(tmp_path)
    _edit_index(board, lambda entry: entry.update({field: value}))
    problems = board.check()
    assert any(why in p for p in problems), problems
    with pytest.raises(BoardError, match="modified after runs were added"):
        build_site(board, tmp_path / "site")


def test_an_entry_listed_twice_in_the_index_is_refused(tmp_path: Path) -> None:
    board = _board_with_one_run(tmp_path)
    data = json.loads(board.index_path.read_text())
    twin = dict(data["entries"][0], id=data["entries"][0]["id"] + "-b")
    data["entries"] += [data["entries"][0], twin]
    board.index_path.write_text(json.dumps(data))
    (board.path / "runs" / twin["id"]).mkdir()
    for name in ("config.json", "summary.json"):
        src = board.path / "runs" / data["entries"][0]["id"] / name
        (board.path / "runs" / twin["id"] / name).write_bytes(src.read_bytes())
    problems = " | ".join(board.check())
    assert "listed more than once" in problems and "counted twice" in problems


# -- one run added twice ----------------------------------------------------------------------------
def _respell(src: Path, dest: Path, *, created_at: float | None = None) -> Path:
    """The same run, spelled differently: lines reversed, keys reordered, JSON re-indented."""
    dest.mkdir()
    lines = (src / "rollouts.jsonl").read_text().splitlines()
    respelled = [json.dumps(dict(reversed(list(json.loads(line).items())))) for line in reversed(lines)]
    (dest / "rollouts.jsonl").write_text("".join(line + "\n" for line in respelled))
    config = json.loads((src / "config.json").read_text())
    if created_at is not None:
        config["created_at"] = created_at
    (dest / "config.json").write_text(json.dumps(config, indent=4, sort_keys=True))
    (dest / "summary.json").write_text(json.dumps(json.loads((src / "summary.json").read_text())))
    return dest


@pytest.mark.parametrize("created_at", [None, 1_790_000_500.0], ids=["same-start", "restamped-start"])
def test_the_same_run_respelled_is_not_added_twice(tmp_path: Path, created_at: float | None) -> None:
    # before: only byte-identical files were recognised, so a copy with reordered lines or
    # re-indented JSON entered as a second row of the same model in the same column
    board = Board(tmp_path / "board")
    original = write_run(tmp_path / "r")
    first, added = board.add(original)
    assert added
    again, added = board.add(_respell(original, tmp_path / "copy", created_at=created_at))
    assert not added and again.id == first.id
    assert len(board.entries()) == 1


def test_two_real_runs_of_one_model_are_still_two_entries(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    board.add(write_run(tmp_path / "a", seed=0))
    board.add(write_run(tmp_path / "b", seed=1))
    assert len(board.entries()) == 2 and board.check() == []


# -- dates and costs --------------------------------------------------------------------------------
def _set_config(run: Path, **changes: object) -> Path:
    config = json.loads((run / "config.json").read_text())
    config.update(changes)
    (run / "config.json").write_text(json.dumps(config, indent=2))
    return run


@pytest.mark.parametrize(
    "created_at",
    [4_000_000_000.0, float("nan"), float("inf"), -1e20],
    ids=["future", "nan", "inf", "before-1970"],
)
def test_a_start_date_that_is_not_a_past_date_is_refused(run: Path, created_at: float) -> None:
    # before: accepted. A future date made a forged build of a version the "current" column and
    # the real one stale; NaN was written into index.json as null, after which the whole board
    # failed to load ("not a valid board index"); an out-of-range date crashed the site build
    assert "which is not a past date" in _reasons(_set_config(run, created_at=created_at))


def test_a_start_date_moved_past_the_rollouts_is_refused(run: Path) -> None:
    assert "after its first rollout" in _reasons(_set_config(run, created_at=1_790_100_000.0))


def test_a_resumed_run_started_before_its_later_rollouts_is_fine(run: Path) -> None:
    verify_run(_set_config(run, created_at=1_789_000_000.0))


@pytest.mark.parametrize("cost", [-5.0, float("nan"), float("inf")], ids=str)
def test_a_cost_that_is_not_a_cost_is_refused(run: Path, cost: float) -> None:
    # before: the sum (negative, nan, inf) was shown as the run's cost
    def edit(rec: Record) -> None:
        rec["extra"]["cost_usd"] = cost

    assert "cost_usd that is not a finite, non-negative number" in _reasons(_forge(run, edit))


def test_recorded_costs_still_add_up(run: Path) -> None:
    def edit(rec: Record) -> None:
        rec["extra"]["cost_usd"] = 0.25

    assert verify_run(_forge(run, edit)).cost_usd == pytest.approx(2.0)


def test_a_non_finite_sampling_setting_is_refused(run: Path) -> None:
    # before: accepted, and index.json stored the inf as null
    sampling = {"temperature": float("inf"), "max_tokens": 64}
    assert "sampling temperature=inf" in _reasons(_set_config(run, sampling=sampling))


@pytest.mark.parametrize("price", [float("nan"), float("inf")])
def test_token_prices_must_be_finite(price: float) -> None:
    from leaderboard.board import TokenPrices

    with pytest.raises(ValueError, match="finite"):
        TokenPrices(price, 1.0)


# -- columns ----------------------------------------------------------------------------------------
def _run_with(
    tmp_path: Path, name: str, *, split: str = "test", env_args: Record | None = None, **kw: Any
) -> Path:
    run = write_run(tmp_path / name, **kw)
    return _set_config(run, split=split, env_args=env_args or {})


@pytest.mark.slow
def test_runs_on_another_split_or_with_other_env_args_are_not_ranked_together(tmp_path: Path) -> None:
    # before: one column per (version, hash), so an easy-difficulty or train-split run ranked
    # first next to runs of the real benchmark
    board = Board(tmp_path / "board")
    hard = ((0.0, 1.0), (0.0, 0.0), (1.0, 0.0), (0.0, 0.0))
    easy = ((1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    board.add(_run_with(tmp_path, "a", model="honest-a", rewards=hard))
    board.add(_run_with(tmp_path, "b", model="honest-b", rewards=hard, seed=1))
    board.add(_run_with(tmp_path, "c", model="cheat-split", split="train", rewards=easy, seed=2))
    board.add(_run_with(tmp_path, "d", model="cheat-args", env_args={"difficulty": 0}, rewards=easy, seed=3))
    (env,) = aggregate(board.entries())
    assert len(env.columns) == 3
    current = env.current
    assert [e.model for e in current.rows] == ["honest-a", "honest-b"]
    assert not any(c.stale for c in env.columns)  # one build: none of its columns is stale
    labels = sorted(c.label for c in env.columns)
    assert labels == [
        "1.0.0 [split=test, difficulty=0]",
        "1.0.0 [split=test]",
        "1.0.0 [split=train]",
    ]
    assert board.check() == []
    build_site(board, tmp_path / "site")
    page = next((tmp_path / "site" / "env").glob("*.html")).read_text()
    ids = re.findall(r'<section [^>]*id="([^"]+)"', page)
    assert len(ids) == 3 and len(set(ids)) == 3


def test_columns_of_an_older_build_are_all_stale(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    board.add(_run_with(tmp_path, "old", env_version="1.0.0", model="m"))
    board.add(_run_with(tmp_path, "old2", env_version="1.0.0", model="m", split="train", seed=1))
    board.add(_run_with(tmp_path, "new", env_version="1.1.0", model="m", seed=2))
    (env,) = aggregate(board.entries())
    assert [(c.env_version, c.split, c.stale) for c in env.columns][0] == ("1.1.0", "test", False)
    assert all(c.stale for c in env.columns[1:])


def test_env_args_in_the_index_must_be_the_configs(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    board.add(_run_with(tmp_path, "a", env_args={"difficulty": 0}))
    _edit_index(board, lambda entry: entry.update(env_args=None))
    assert any("env_args" in p for p in board.check())


def test_per_task_errors_a_summary_does_not_record_are_not_shown_as_zero(tmp_path: Path) -> None:
    # before: an (older-format) summary without per-task n_errors passed verification, and the run
    # page showed 0 errors for tasks whose rollouts had errored
    run = write_run(tmp_path / "r", rewards=((None, None), (1.0, 0.0)))
    data = json.loads((run / "summary.json").read_text())
    for row in data["per_task"]:
        row.pop("n_errors")
    (run / "summary.json").write_text(json.dumps(data))
    board = Board(tmp_path / "board")
    entry, _ = board.add(run)
    build_site(board, tmp_path / "site")
    page = (tmp_path / "site" / "run" / f"{entry.id}.html").read_text()
    row = re.search(r"<tr><td>t0</td>(.*?)</tr>", page)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells == ["0", "0", "–", "–", "–"]  # graded, passed, errors (unrecorded), rate, mean
