"""Integrity checks: an honest run passes; each kind of tampering is refused with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import Board, RunRejected, verify_run
from leaderboard.testing import write_run


def _lines(run: Path) -> list[str]:
    return (run / "rollouts.jsonl").read_text().splitlines(keepends=True)


def _set_lines(run: Path, lines: list[str]) -> None:
    (run / "rollouts.jsonl").write_text("".join(lines))


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def _reasons(run: Path) -> str:
    with pytest.raises(RunRejected) as info:
        verify_run(run)
    assert info.value.reasons, "a refusal must say why"
    return " | ".join(info.value.reasons)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


def test_honest_run_is_accepted_and_recomputed(run: Path) -> None:
    v = verify_run(run)
    assert v.config.env_version == "1.0.0"
    assert v.summary.n_rollouts == 8
    assert v.summary.mean_reward == pytest.approx((1 + 0 + 1 + 1 + 0 + 0 + 0.5 + 1) / 8)
    assert v.task_means == pytest.approx((0.5, 1.0, 0.0, 0.75))
    assert set(v.sha256) == {"config.json", "summary.json", "rollouts.jsonl"}


def test_float_noise_and_per_task_order_are_tolerated(run: Path) -> None:
    data = json.loads((run / "summary.json").read_text())
    data["mean_reward"] += 1e-13
    data["per_task"].reverse()
    (run / "summary.json").write_text(json.dumps(data))
    verify_run(run)


def test_edited_summary_is_refused(run: Path) -> None:
    _edit_json(run / "summary.json", mean_reward=0.99)
    why = _reasons(run)
    assert "summary.json does not match the rollouts" in why
    assert "mean_reward: recorded 0.99" in why


def test_edited_pass_at_k_is_refused(run: Path) -> None:
    _edit_json(run / "summary.json", pass_at_k={"1": 0.9, "2": 1.0})
    assert "pass_at_k.1" in _reasons(run)


def test_dropped_rollout_is_refused(run: Path) -> None:
    lines = _lines(run)
    dropped = json.loads(lines[3])
    _set_lines(run, lines[:3] + lines[4:])
    why = _reasons(run)
    assert "1 of 8 rollouts missing" in why
    assert f"{dropped['task_id']}#{dropped['rollout_index']}" in why


def test_dropped_rollout_with_rewritten_summary_is_still_refused(run: Path, tmp_path: Path) -> None:
    """Even a forger who recomputes summary.json cannot hide a missing rollout."""
    from hub.run.metrics import SummaryBuilder
    from hub.run.rundir import RunDir

    lines = _lines(run)
    _set_lines(run, lines[1:])
    rd = RunDir(run)
    b = SummaryBuilder(env_id="toy", env_version="1.0.0", model="model-a", rollouts_per_task=2)
    for t in ("t0", "t1", "t2", "t3"):
        b.add_task(t)
    rd.write_summary(b.extend(rd.iter_rollouts()).build())
    assert "rollouts missing" in _reasons(run)


def test_duplicated_rollout_is_refused(run: Path) -> None:
    lines = _lines(run)
    _set_lines(run, [*lines, lines[0]])
    assert "rollouts recorded twice" in _reasons(run)


def test_changed_reward_is_refused(run: Path) -> None:
    lines = _lines(run)
    i = next(i for i, ln in enumerate(lines) if json.loads(ln)["reward"] == 0.0)
    rec = json.loads(lines[i])
    rec["reward"] = 1.0
    rec["passed"] = True
    lines[i] = json.dumps(rec) + "\n"
    _set_lines(run, lines)
    why = _reasons(run)
    assert "does not match the rollouts" in why
    assert "contradicts their grade" in why


def test_missing_env_hash_is_refused(run: Path) -> None:
    data = json.loads((run / "config.json").read_text())
    del data["env_hash"]
    (run / "config.json").write_text(json.dumps(data))
    assert "env_hash" in _reasons(run)


@pytest.mark.parametrize("bad", ["", "sha256:", "md5:abc", "sha256:" + "z" * 64])
def test_malformed_env_hash_is_refused(run: Path, bad: str) -> None:
    _edit_json(run / "config.json", env_hash=bad)
    assert "no environment content hash" in _reasons(run)


def test_missing_env_version_is_refused(run: Path) -> None:
    _edit_json(run / "config.json", env_version="")
    assert "does not name the environment version" in _reasons(run)


def test_rollout_outside_configured_tasks_is_refused(run: Path) -> None:
    lines = _lines(run)
    rec = json.loads(lines[0])
    rec["rollout_index"] = 7
    _set_lines(run, [*lines, json.dumps(rec) + "\n"])
    assert "outside the configured tasks x rollouts" in _reasons(run)


def test_task_count_must_match_config(run: Path) -> None:
    _edit_json(run / "config.json", num_tasks=5)
    assert "the config selected 5" in _reasons(run)


def test_torn_last_line_is_refused(run: Path) -> None:
    with (run / "rollouts.jsonl").open("a") as fh:
        fh.write('{"task_id": "t0", "rollout_')
    assert "torn line" in _reasons(run)


def test_unfinished_run_without_summary_is_refused(run: Path) -> None:
    (run / "summary.json").unlink()
    assert "has not finished" in _reasons(run)


def test_not_a_run_directory(tmp_path: Path) -> None:
    assert "not a run directory" in _reasons(tmp_path / "nothing")


def test_errored_rollouts_are_counted_not_scored(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", rewards=((1.0, None), (0.0, 0.0)))
    v = verify_run(run)
    assert v.summary.n_errors == 1
    assert v.summary.errors_by_kind == {"model": 1}
    assert v.summary.mean_reward == pytest.approx(1 / 3)


def test_board_refuses_tampered_run_and_writes_nothing(run: Path, tmp_path: Path) -> None:
    _edit_json(run / "summary.json", n_errors=3)
    board = Board(tmp_path / "board")
    with pytest.raises(RunRejected, match="n_errors"):
        board.add(run)
    assert not (tmp_path / "board").exists()


def _arith_run(path: Path, task_ids: list[str]) -> Path:
    from hub.registry.entrypoints import load_environment, package_hash

    return write_run(
        path,
        env_id="arith",
        env_version=load_environment("arith").version,
        env_hash=package_hash("arith"),
        task_ids=task_ids,
        rewards=[(1.0, 0.0)] * len(task_ids),
    )


def test_check_tasks_accepts_the_tasks_the_environment_selects(tmp_path: Path) -> None:
    run = _arith_run(tmp_path / "r", [f"test-0-{i}" for i in range(4)])
    assert verify_run(run, check_tasks=True).tasks_checked
    assert not verify_run(run).tasks_checked


def test_check_tasks_refuses_a_cherry_picked_task_set(tmp_path: Path) -> None:
    """A run whose hard task 2 was swapped for task 9 is self-consistent but not the config's run."""
    run = _arith_run(tmp_path / "r", ["test-0-0", "test-0-1", "test-0-9", "test-0-3"])
    verify_run(run)  # self-consistent
    with pytest.raises(RunRejected) as info:
        verify_run(run, check_tasks=True)
    why = " ".join(info.value.reasons)
    assert "missing test-0-2" in why and "not selected by the config test-0-9" in why


def test_check_tasks_needs_the_same_environment_installed(run: Path) -> None:
    with pytest.raises(RunRejected, match="cannot check the task set"):
        verify_run(run, check_tasks=True)


def test_summary_of_an_older_verihub_without_newer_fields_is_accepted(run: Path) -> None:
    data = json.loads((run / "summary.json").read_text())
    data.pop("zero_variance_fraction", None)
    for row in data["per_task"]:
        row.pop("n_errors")  # has a default in PerTask
    (run / "summary.json").write_text(json.dumps(data))
    verify_run(run)


def test_summary_missing_a_required_field_is_refused(run: Path) -> None:
    data = json.loads((run / "summary.json").read_text())
    del data["mean_reward"]
    (run / "summary.json").write_text(json.dumps(data))
    assert "not a valid summary" in _reasons(run)


def test_per_task_row_edit_is_refused(run: Path) -> None:
    data = json.loads((run / "summary.json").read_text())
    data["per_task"][2]["n_passed"] = 2
    (run / "summary.json").write_text(json.dumps(data))
    assert "per_task.t2.n_passed: recorded 2, recomputed 0" in _reasons(run)
