"""hub.train.export and `verihub export`: SFT chat records and DPO preference pairs from a run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hub.cli.export  # noqa: F401  (registers `verihub export` until the lead wires it in)
from hub.cli import main
from hub.env.errors import UsageError
from hub.env.types import Message, Rollout, RolloutError, Timing, ToolCall
from hub.run.rundir import RunConfig, RunDir
from hub.train.export import export_run, preference_pairs, sft_records


def _rollout(task: str, index: int, answer: str, *, passed: bool, error: bool = False) -> Rollout:
    return Rollout(
        task_id=task,
        rollout_index=index,
        messages=[
            Message(role="system", content="Be brief."),
            Message(role="user", content=f"Question {task}?"),
            Message(role="assistant", content=answer),
        ],
        completion=answer,
        reward=None if error else float(passed),
        passed=passed,
        timing=Timing(started_at=0.0),
        error=RolloutError(kind="model", message="HTTP 500") if error else None,
    )


@pytest.fixture
def run_dir(tmp_path: Path, config_factory: Callable[..., RunConfig]) -> Path:
    rd = RunDir(tmp_path / "run")
    rd.create(config_factory(num_tasks=3, rollouts=3))
    rollouts = [
        _rollout("t0", 0, "Answer: 1", passed=True),
        _rollout("t0", 1, "Answer: 9", passed=False),
        _rollout("t0", 2, "Answer: 1", passed=True),
        _rollout("t1", 0, "Answer: 2", passed=True),  # t1: no failure, so no pair
        _rollout("t1", 1, "", passed=False, error=True),  # errors are never exported
        _rollout("t2", 0, "Answer: 5", passed=False),
    ]
    with rd.open_writer() as w:
        w.write_many(rollouts)
    return rd.path


def test_sft_records(run_dir: Path) -> None:
    all_graded = list(sft_records(run_dir))
    assert [(r["task_id"], r["rollout_index"]) for r in all_graded] == [
        ("t0", 0),
        ("t0", 1),
        ("t0", 2),
        ("t1", 0),
        ("t2", 0),
    ]
    gold = list(sft_records(run_dir, only_passed=True))
    assert len(gold) == 3 and all(r["passed"] and r["reward"] == 1.0 for r in gold)
    assert gold[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Question t0?"},
        {"role": "assistant", "content": "Answer: 1"},
    ]


def test_preference_pairs(run_dir: Path) -> None:
    pairs = list(preference_pairs(run_dir))
    assert len(pairs) == 1  # t0: 2 passed, 1 failed -> one pair, each rollout used once
    p = pairs[0]
    assert p["task_id"] == "t0"
    assert p["prompt"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Question t0?"},
    ]
    assert p["chosen"] == [{"role": "assistant", "content": "Answer: 1"}]
    assert p["rejected"] == [{"role": "assistant", "content": "Answer: 9"}]
    assert (p["chosen_reward"], p["rejected_reward"]) == (1.0, 0.0)


def test_export_jsonl_and_hf(run_dir: Path, tmp_path: Path) -> None:
    from datasets import load_from_disk

    assert export_run(run_dir, out=tmp_path / "sft.jsonl", fmt="jsonl", only_passed=True) == 3
    lines = (tmp_path / "sft.jsonl").read_text().splitlines()
    assert [json.loads(x)["task_id"] for x in lines] == ["t0", "t0", "t1"]
    assert export_run(run_dir, out=tmp_path / "dpo", fmt="hf", pairs=True) == 1
    ds = load_from_disk(str(tmp_path / "dpo"))
    assert ds.column_names[:3] == ["prompt", "chosen", "rejected"]
    assert ds[0]["chosen"] == [{"role": "assistant", "content": "Answer: 1"}]


def test_export_hf_with_tool_calls(tmp_path: Path, config_factory: Callable[..., RunConfig]) -> None:
    from datasets import load_from_disk

    rd = RunDir(tmp_path / "run")
    rd.create(config_factory(num_tasks=1, rollouts=1))
    call = ToolCall(id="c1", name="add", arguments='{"a": 1}')
    r = _rollout("t0", 0, "Answer: 2", passed=True)
    r = r.model_copy(
        update={
            "messages": [
                r.messages[1],
                Message(role="assistant", tool_calls=(call,)),
                Message(role="tool", content="2", tool_call_id="c1", name="add"),
                r.messages[2],
            ]
        }
    )
    with rd.open_writer() as w:
        w.write(r)
    assert export_run(rd.path, out=tmp_path / "hf", fmt="hf") == 1
    msgs = load_from_disk(str(tmp_path / "hf"))[0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert json.loads(msgs[1]["tool_calls"])[0]["function"]["name"] == "add"


def test_export_refuses_bad_requests(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="drop --only-passed"):
        export_run(run_dir, out=tmp_path / "x.jsonl", pairs=True, only_passed=True)
    (tmp_path / "exists.jsonl").write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        export_run(run_dir, out=tmp_path / "exists.jsonl")
    assert (tmp_path / "exists.jsonl").read_text() == "keep me"
    with pytest.raises(UsageError, match="not a verihub run directory|not a run directory"):
        export_run(tmp_path, out=tmp_path / "y.jsonl")


def test_cli_export(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pairs.jsonl"
    with pytest.raises(SystemExit) as ok:
        main(["export", str(run_dir), "--format", "jsonl", "--pairs", "--out", str(out)])
    assert ok.value.code == 0
    rec: dict[str, Any] = json.loads(out.read_text().splitlines()[0])
    assert set(rec) >= {"prompt", "chosen", "rejected"}
    assert "wrote 1 preference pairs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad:
        main(["export", str(run_dir), "--format", "parquet", "--out", str(tmp_path / "z")])
    assert bad.value.code == 1
    assert "--format must be hf or jsonl" in capsys.readouterr().err
