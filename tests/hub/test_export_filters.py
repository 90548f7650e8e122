"""``verihub export --sft`` filters and provenance on run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hub.env.errors import UsageError
from hub.train.export import export_run, sft_records
from hub.train.sft_filters import SftFilter, apply_filters, parse_band
from leaderboard.testing import fake_env_hash, write_run

# task t0 passes 4 of 4, t1 2 of 4, t2 1 of 4, t3 0 of 4 (one with a partial reward of 0.5)
REWARDS = ((1, 1, 1, 1), (1, 1, 0, 0), (1, 0, 0, 0), (0, 0, 0.5, 0))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run", rewards=[[float(x) for x in row] for row in REWARDS])


def test_every_record_carries_its_provenance_and_task_pass_rate(run_dir: Path) -> None:
    records = list(sft_records(run_dir))
    assert len(records) == 16
    indices = sorted(r["provenance"]["rollout"] for r in records)
    assert indices == list(range(16))  # the rollout's line in rollouts.jsonl
    for r in records:
        p = r["provenance"]
        assert (p["source"], p["env_id"], p["env_version"]) == ("run_dir", "toy", "1.0.0")
        assert p["env_hash"] == fake_env_hash("toy", "1.0.0") and p["run"] == str(run_dir)
    rates = {r["task_id"]: r["task_pass_rate"] for r in records}
    assert rates == {"t0": 1.0, "t1": 0.5, "t2": 0.25, "t3": 0.0}
    line = (
        (run_dir / "rollouts.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[records[0]["provenance"]["rollout"]]
    )
    assert json.loads(line)["task_id"] == records[0]["task_id"]


def test_min_reward_and_pass_rate_band(run_dir: Path, tmp_path: Path) -> None:
    half = list(sft_records(run_dir, filters=SftFilter(min_reward=0.5)))
    assert len(half) == 8 and all(r["reward"] >= 0.5 for r in half)  # 7 passes and the 0.5
    band = list(sft_records(run_dir, filters=SftFilter(pass_rate_band=(0.2, 0.6))))
    assert {r["task_id"] for r in band} == {"t1", "t2"} and len(band) == 8
    both = SftFilter(min_reward=1.0, pass_rate_band=(0.2, 0.6))
    assert export_run(run_dir, out=tmp_path / "sft.jsonl", filters=both) == 3
    written = [json.loads(x) for x in (tmp_path / "sft.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["provenance"]["env_id"] == "toy" and r["reward"] == 1.0 for r in written)
    with pytest.raises(UsageError, match="no graded rollouts"):
        export_run(
            run_dir, out=tmp_path / "none.jsonl", filters=SftFilter(min_reward=1.0, pass_rate_band=(0.0, 0.0))
        )


def test_labels_and_corrections_need_a_hub(run_dir: Path, tmp_path: Path) -> None:
    for f in (SftFilter(label="correct"), SftFilter(corrected=True)):
        with pytest.raises(UsageError, match="--hub"):
            export_run(run_dir, out=tmp_path / "x.jsonl", filters=f)
    with pytest.raises(UsageError, match="--label"):
        SftFilter(label="great")
    with pytest.raises(UsageError, match="need --sft"):
        export_run(run_dir, out=tmp_path / "p.jsonl", pairs=True, filters=SftFilter(min_reward=1.0))


def test_filters_on_reviewed_records() -> None:
    records = [
        {"task_id": "a", "reward": 1.0, "label": "correct", "corrected": False, "task_pass_rate": 0.5},
        {"task_id": "a", "reward": 1.0, "label": "reward_hack", "corrected": False, "task_pass_rate": 0.5},
        {"task_id": "b", "reward": 1.0, "label": None, "corrected": True, "task_pass_rate": 0.9},
        {"task_id": "b", "reward": 0.0, "label": "incorrect", "corrected": True, "task_pass_rate": 0.9},
    ]
    assert apply_filters(records, SftFilter(label="correct")) == records[:1]
    assert apply_filters(records, SftFilter(corrected=True)) == records[2:]
    assert apply_filters(records, SftFilter(corrected=True, min_reward=0.5)) == records[2:3]
    assert apply_filters(records, SftFilter(pass_rate_band=(0.0, 0.6))) == records[:2]
    assert apply_filters(records, SftFilter()) == records


@pytest.mark.parametrize("text", ["0.9,0.1", "1,2", "-0.1,0.5", "a,b", "0.5"])
def test_bad_bands_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="LO,HI"):
        parse_band(text)


def test_band_bounds_are_inclusive() -> None:
    assert parse_band("0,1") == (0.0, 1.0) and parse_band("0.25, 0.5") == (0.25, 0.5)
