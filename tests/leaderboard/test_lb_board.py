"""Board storage, aggregation into version columns, stale marking, and the bootstrap."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from leaderboard import Board, BoardError, TokenPrices, aggregate, bootstrap_ci
from leaderboard.aggregate import stale_reason, version_key
from leaderboard.testing import write_run


def test_add_records_provenance_and_copies_files(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", model="m1")
    board = Board(tmp_path / "board")
    entry, added = board.add(run)
    assert added
    assert entry.env_version == "1.0.0"
    assert entry.env_hash.startswith("sha256:")
    assert entry.sampling["temperature"] == 0.7
    assert entry.verihub_version == "0.1.0"
    assert entry.usage["total_tokens"] == 8 * 15
    assert entry.ci95 is not None and entry.ci95[0] <= (entry.mean_reward or 0) <= entry.ci95[1]
    stored = board.entry_dir(entry)
    assert (stored / "summary.json").read_bytes() == (run / "summary.json").read_bytes()
    assert not (stored / "rollouts.jsonl").exists()
    assert board.rollouts_path(entry) == run / "rollouts.jsonl"
    index = json.loads((tmp_path / "board" / "index.json").read_text())
    assert [e["id"] for e in index["entries"]] == [entry.id]
    assert board.check() == []


def test_adding_the_same_run_twice_is_a_no_op(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    board = Board(tmp_path / "board")
    first, _ = board.add(run)
    again, added = board.add(run, copy_rollouts=True)
    assert not added and again.id == first.id
    assert len(board.entries()) == 1


def test_copied_rollouts_survive_the_run_directory(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    board = Board(tmp_path / "board")
    entry, _ = board.add(run, copy_rollouts=True)
    (run / "rollouts.jsonl").unlink()
    assert board.rollouts_path(entry) == board.entry_dir(entry) / "rollouts.jsonl"


def test_moved_or_changed_source_rollouts_are_not_shown(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    board = Board(tmp_path / "board")
    entry, _ = board.add(run)
    with (run / "rollouts.jsonl").open("a") as fh:
        fh.write("\n")
    assert board.rollouts_path(entry) is None


def test_check_notices_a_board_edited_after_add(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry, _ = board.add(write_run(tmp_path / "run"), copy_rollouts=True)
    summary = board.entry_dir(entry) / "summary.json"
    summary.write_text(summary.read_text().replace('"n_errors": 0', '"n_errors": 1'))
    (board.entry_dir(entry) / "rollouts.jsonl").unlink()
    problems = board.check()
    assert any("summary.json was changed" in p for p in problems)
    assert any("rollouts.jsonl is missing" in p for p in problems)


def test_foreign_folder_is_not_a_board(tmp_path: Path) -> None:
    (tmp_path / "somefile").write_text("x")
    with pytest.raises(BoardError, match="not a leaderboard"):
        Board(tmp_path).entries()


def test_empty_board_says_how_to_add(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match="leaderboard add"):
        Board(tmp_path / "b").require_entries()


def test_hostile_entry_id_in_index_is_rejected(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    board.add(write_run(tmp_path / "run"))
    data = json.loads(board.index_path.read_text())
    data["entries"][0]["id"] = "../../etc/x"
    board.index_path.write_text(json.dumps(data))
    with pytest.raises(BoardError, match="not a valid board index"):
        board.entries()


def test_versions_are_never_mixed_and_older_ones_are_stale(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    good, bad = ((1.0, 1.0), (1.0, 0.0)), ((0.0, 0.0), (1.0, 0.0))
    board.add(write_run(tmp_path / "a", env_version="0.9.0", model="old", rewards=good))
    board.add(write_run(tmp_path / "b", env_version="0.10.0", model="strong", rewards=good))
    board.add(write_run(tmp_path / "c", env_version="0.10.0", model="weak", rewards=bad))
    board.add(write_run(tmp_path / "d", env_id="other", model="weak", rewards=bad))
    (toy,) = aggregate(board.entries(), env_id="toy")
    assert [c.env_version for c in toy.columns] == ["0.10.0", "0.9.0"]
    assert [c.stale for c in toy.columns] == [False, True]
    assert [r.model for r in toy.current.rows] == ["strong", "weak"]
    assert [r.model for r in toy.columns[1].rows] == ["old"]
    assert {r.env_version for c in toy.columns for r in c.rows if c.env_version == "0.10.0"} == {"0.10.0"}
    assert [e.env_id for e in aggregate(board.entries())] == ["other", "toy"]


def test_builds_of_one_version_are_separate_columns(tmp_path: Path) -> None:
    """Same version, different package contents (changed without a version bump): two columns,
    the build whose runs started later is current, and labels tell them apart."""
    board = Board(tmp_path / "board")
    old_hash, new_hash = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    board.add(write_run(tmp_path / "a", model="early", env_hash=old_hash, seed=0))
    board.add(write_run(tmp_path / "b", model="late", env_hash=new_hash, seed=5))
    board.add(write_run(tmp_path / "c", model="early-too", env_hash=old_hash, seed=1))
    (toy,) = aggregate(board.entries())
    assert [(c.env_hash, c.stale) for c in toy.columns] == [(new_hash, False), (old_hash, True)]
    assert [r.model for r in toy.current.rows] == ["late"]
    assert sorted(r.model for r in toy.columns[1].rows) == ["early", "early-too"]
    assert [c.label for c in toy.columns] == ["1.0.0 (bbbbbbbbbb)", "1.0.0 (aaaaaaaaaa)"]
    assert stale_reason(toy.columns[1], toy) == "a newer build of v1.0.0 (bbbbbbbbbb) was run"
    assert stale_reason(toy.current, toy) == ""


def test_version_ordering() -> None:
    versions = ["1.0.0", "0.10.0", "0.9.1", "0.9", "1.0.0rc1", "v2", "nightly"]
    assert sorted(versions, key=version_key) == [
        "nightly",
        "0.9",
        "0.9.1",
        "0.10.0",
        "1.0.0rc1",
        "1.0.0",
        "v2",
    ]


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    rng = random.Random(1)
    means = [rng.random() for _ in range(50)]
    ci = bootstrap_ci(means, seed=3)
    assert ci == bootstrap_ci(means, seed=3)
    assert ci != bootstrap_ci(means, seed=4)
    assert ci is not None
    mean = sum(means) / len(means)
    assert ci[0] < mean < ci[1]
    # about mean +- 1.96 * sd / sqrt(n) for a uniform(0, 1) sample
    assert 0.10 < ci[1] - ci[0] < 0.22


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([0.1, 0.2], resamples=0)


def test_cost_is_recorded_only_when_every_rollout_has_it(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    lines = (run / "rollouts.jsonl").read_text().splitlines()
    priced = []
    for ln in lines:
        rec = json.loads(ln)
        rec["extra"]["cost_usd"] = 0.25
        priced.append(json.dumps(rec))
    (run / "rollouts.jsonl").write_text("\n".join(priced) + "\n")
    entry, _ = Board(tmp_path / "b1").add(run)
    assert entry.cost_usd == pytest.approx(8 * 0.25)

    (run / "rollouts.jsonl").write_text("\n".join(priced[1:] + lines[:1]) + "\n")
    entry, _ = Board(tmp_path / "b2").add(run)
    assert entry.cost_usd is None


def test_cost_from_token_prices_when_rollouts_record_none(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")  # 8 rollouts of 10 prompt + 5 completion tokens
    prices = TokenPrices(prompt_usd_per_mtok=3.0, completion_usd_per_mtok=15.0)
    entry, _ = Board(tmp_path / "b").add(run, prices=prices)
    assert entry.cost_usd == pytest.approx((80 * 3.0 + 40 * 15.0) / 1e6)
    assert entry.cost_basis is not None and "$3/M prompt" in entry.cost_basis
    assert Board(tmp_path / "b2").add(run)[0].cost_basis is None
    with pytest.raises(ValueError):
        TokenPrices(prompt_usd_per_mtok=-1.0, completion_usd_per_mtok=0.0)


def test_same_rollouts_under_two_models_are_two_entries(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    a, _ = board.add(write_run(tmp_path / "a", model="same"))
    b, added = board.add(write_run(tmp_path / "b", model="same", seed=1))
    assert added and a.id != b.id
    rollouts = [(tmp_path / d / "rollouts.jsonl").read_bytes() for d in ("a", "b")]
    assert rollouts[0] == rollouts[1]
    assert len({board.entry_dir(e) for e in board.entries()}) == 2


def test_bootstrap_weights_follow_the_rollout_mean() -> None:
    """Weighted by graded rollouts, the interval is about the rollout-weighted mean: a task with
    one graded rollout counts a quarter of one with four."""
    means, weights = [1.0] * 10 + [0.0] * 10, [4] * 10 + [1] * 10
    rollout_mean = sum(m * w for m, w in zip(means, weights, strict=True)) / sum(weights)  # 0.8
    ci = bootstrap_ci(means, weights=weights, seed=1, resamples=4000)
    assert ci is not None and ci[0] <= rollout_mean <= ci[1] and ci[0] > 0.5
    unweighted = bootstrap_ci(means, seed=1, resamples=4000)
    assert unweighted is not None and unweighted[0] < 0.5 < unweighted[1] < rollout_mean
    with pytest.raises(ValueError):
        bootstrap_ci(means, weights=[1, 2])
