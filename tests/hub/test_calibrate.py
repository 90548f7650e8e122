"""verihub calibrate: Wilson intervals, classification by pass rate, JSONL + datasets export."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import pytest
from verihub_arith import generate

from hub.review.calibrate import (
    calibrate,
    calibration_from_summary,
    histogram_text,
    in_band,
    wilson_interval,
)
from hub.run.fake_server import FakeChatServer
from hub.run.metrics import PerTask, Summary


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(0, 16)
    assert lo == 0.0 and 0.19 < hi < 0.21
    lo, hi = wilson_interval(8, 16)
    assert lo == pytest.approx(0.28, abs=0.01) and hi == pytest.approx(0.72, abs=0.01)
    assert wilson_interval(16, 16)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def summary(rates: dict[str, tuple[int, int]]) -> Summary:
    per = [PerTask(task_id=t, n=n, n_passed=k, pass_rate=k / n if n else None) for t, (k, n) in rates.items()]
    return Summary(
        env_id="e",
        model="m",
        n_tasks=len(per),
        rollouts_per_task=16,
        n_rollouts=16 * len(per),
        n_errors=0,
        mean_reward=None,
        ci95=None,
        pass_at_k={},
        pass_all_k={},
        per_task=per,
    )


def test_classification_and_histogram() -> None:
    s = summary({"zero": (0, 16), "low": (2, 16), "mid": (8, 16), "edge": (12, 16), "sat": (16, 16)})
    cal = calibration_from_summary(s, gold={"zero": False})
    assert cal.zero == ["zero"] and cal.possibly_infeasible == ["zero"]
    assert cal.learnable == ["low", "mid"]  # 1/64 <= p <= 0.7; 0.75 is outside
    assert cal.saturated == ["sat"]
    assert sum(c for _, _, c in cal.histogram) == 5 and cal.histogram[-1][2] == 1
    assert "#" in histogram_text(cal)
    wide = calibration_from_summary(s, band=(0.0, 0.8), gold={"zero": True})
    assert wide.learnable == ["low", "mid", "edge"] and wide.possibly_infeasible == []
    with pytest.raises(ValueError):
        calibration_from_summary(s, band=(0.5, 0.5))


def test_the_band_is_inclusive_and_needs_a_pass() -> None:
    """The issue's band: at least one pass in 64, at most 70%, both ends included; a task with no
    pass is out even when the lower bound is 0 (it gives RL no signal)."""
    s = Summary.model_validate(
        summary({"z": (0, 10), "seven": (7, 10), "one128": (1, 128), "one64": (1, 64)}).model_dump()
    )
    assert calibration_from_summary(s).learnable == ["seven", "one64"]
    assert calibration_from_summary(s, band=(0.0, 0.7)).learnable == ["seven", "one128", "one64"]
    assert in_band(0.7) and in_band(1 / 64) and not in_band(0.0, (0.0, 0.7)) and not in_band(None)


async def test_calibrate_end_to_end_with_a_fake_model(tmp_path: Path) -> None:
    """The train split by default; the export's prompt is the chat messages to_dataset writes."""
    tasks = list(itertools.islice(generate("train", 0), 6))
    answers = {t.prompt: int(t.answer) for t in tasks}
    calls: Counter[str] = Counter()

    def responder(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        index = [t.prompt for t in tasks].index(prompt)
        calls[prompt] += 1
        right = {0: True, 1: False}.get(index % 3, calls[prompt] % 2 == 0)  # 100%, 0%, 50%
        return f"Answer: {answers[prompt] if right else answers[prompt] + 1}"

    async with FakeChatServer(responder=responder) as server:
        cal = await calibrate(
            "arith", model="fake", base_url=server.base_url, out=tmp_path, rollouts=4, num_tasks=6
        )
    ids = [t.id for t in tasks]
    assert cal.saturated == [ids[0], ids[3]]
    assert cal.zero == [ids[1], ids[4]] and cal.possibly_infeasible == []  # gold passes: feasible
    assert cal.learnable == [ids[2], ids[5]]
    rows = [json.loads(line) for line in (tmp_path / "learnable.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == cal.learnable and rows[0]["pass_rate"] == 0.5
    ds = datasets.load_from_disk(str(tmp_path / "learnable_dataset"))
    assert ds.num_rows == 2 and json.loads(ds[0]["answer"]) == tasks[2].answer
    from hub.registry.entrypoints import load_environment
    from hub.train.rewards import to_dataset

    train = to_dataset(load_environment("arith"), "train", 6)
    assert ds[0]["prompt"] == train[2]["prompt"] == rows[0]["prompt"]
    assert ds[0]["prompt"][-1] == {"role": "user", "content": tasks[2].prompt}
    assert json.loads((tmp_path / "run" / "config.json").read_text())["split"] == "train"
    assert json.loads((tmp_path / "calibration.json").read_text())["learnable"] == cal.learnable


@pytest.mark.parametrize("split", ["train", "test"])
def test_cli_calibrate(split: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio
    import threading

    import hub.cli
    from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)

    loop = asyncio.new_event_loop()
    server = FakeChatServer(responder=lambda request: "Answer: 2")
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    try:
        with pytest.raises(SystemExit) as exc:
            hub.cli.main(
                ["calibrate", "arith", "--model", "fake", "--base-url", server.base_url, "--rollouts", "2",
                 "--num-tasks", "3", "--band-high", "0.9", "--out", str(tmp_path), "--split", split]
            )  # fmt: skip
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
    assert exc.value.code == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "3 tasks x 2 rollouts" in out and "learnable (0.0156 <= p <= 0.9, p > 0)" in out
    assert "per task (first 3 of 3)" in out and "95% CI" in out and f"{split}-0-0" in out
    assert ("warning: calibrating on the test split" in captured.err) == (split == "test")
    assert (tmp_path / "calibration.json").exists() and (tmp_path / "learnable_dataset").is_dir()


async def test_calibrate_refuses_a_missing_train_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment with only a test split is calibrated only when --split test is said."""
    import hub.registry.entrypoints as entrypoints
    from graders.exact import ExactGrader
    from hub import SingleTurnEnv, Task
    from hub.env.errors import UsageError

    only_test = SingleTurnEnv(
        id="t", tasks={"test": [Task(id="a", prompt="p", answer="1")]}, grader=ExactGrader()
    )
    monkeypatch.setattr(entrypoints, "load_environment", lambda env_id, **kw: only_test)
    with pytest.raises(UsageError, match="has no 'train' split; it has test: pass --split NAME"):
        await calibrate("t", model="m", base_url="http://127.0.0.1:1/v1", out=tmp_path)
    assert not (tmp_path / "run").exists()
