"""``verihub eval --curriculum`` and ``verihub info --difficulty``: a scripted model on a fake
server, the run directory's trajectory, and the one-line refusals."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hub.env.difficulty import POINT_KEY
from hub.env.types import Sampling
from hub.registry.entrypoints import load_environment
from hub.run.evaluate import EvalOptions
from hub.run.fake_server import FakeChatServer
from hub.run.local_model import local_model_path
from hub.train.curriculum import CurriculumConfig
from hub.train.curriculum_eval import evaluate_curriculum

LEVEL_PASS = {1: 1.0, 2: 1.0, 3: 0.5, 4: 0.0, 5: 0.0}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"COLUMNS": "200", "VERIHUB_CONFIG": "/nonexistent/verihub.toml"}
    return subprocess.run(
        [sys.executable, "-m", "hub", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def scripted_arith() -> Any:
    """Answers arith prompts right with its level's probability (the answers come from the
    environment's own tasks, looked up by prompt)."""
    env = load_environment("arith")
    known: dict[str, tuple[str, int]] = {}
    for level in LEVEL_PASS:
        for task in itertools.islice(env.tasks_at({"level": level}, "train", seed=0), 300):
            known[str(task.prompt)] = (str(task.answer), level)
    rng = random.Random(0)

    def respond(request: dict[str, Any]) -> str:
        answer, level = known[request["messages"][-1]["content"]]
        return f"Answer: {answer}" if rng.random() < LEVEL_PASS[level] else "Answer: -1"

    return respond


async def test_a_curriculum_run_climbs_and_records_its_trajectory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    async with FakeChatServer(responder=scripted_arith()) as server:
        run = await evaluate_curriculum(
            "arith",
            model="m",
            base_url=server.base_url,
            out=out,
            num_tasks=60,
            batch_size=8,
            rollouts=4,
            config=CurriculumConfig(band=(0.1, 0.7)),
            options=EvalOptions(concurrency=8),
        )
    assert len(run.batches) == 8 and sum(b.tasks for b in run.batches) == 60 and run.batches[-1].tasks == 4
    assert run.batches[0].level in ("level=1", "level=2") and run.batches[-1].level == "level=3"
    assert run.curriculum is not None and [m.dst for m in run.curriculum.moves][:2] == ["level=2", "level=3"]
    assert run.batches[0].mixed_share == 0.0  # levels 1 and 2 always pass: no group has signal
    assert any((b.mixed_share or 0) > 0 for b in run.batches[-3:])  # at level 3 groups are mixed
    lines = [json.loads(x) for x in (out / "curriculum.jsonl").read_text().splitlines()]
    assert [x["level"] for x in lines] == [b.level for b in run.batches]
    assert {"pass_rate", "mixed_share", "mean_reward", "points"} <= set(lines[0])
    saved = json.loads((out / "curriculum.json").read_text())
    assert saved["level"] == "level=3" and saved["rules"]["band"] == [0.1, 0.7]
    rollouts = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 240 and len({r["task_id"] for r in rollouts}) == 60
    assert run.summary is not None and run.summary.n_rollouts == 240


@pytest.mark.slow
def test_eval_curriculum_prints_the_trajectory(tmp_path: Path) -> None:
    """The CLI end to end, against the stock fake server (always "Answer: 42": never right)."""
    port_proc = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert port_proc.stdout is not None
        line = port_proc.stdout.readline()
        url = line.split()[-1].rstrip("/")
        url = url if url.endswith("/v1") else url + "/v1"
        out = tmp_path / "run"
        proc = cli("eval", "textops", "--curriculum", "--model", "m", "--base-url", url, "-n", "6",
                   "--batch-size", "3", "-r", "2", "--band", "0.5,0.9", "--out", str(out))  # fmt: skip
    finally:
        port_proc.kill()
        port_proc.wait()
    assert proc.returncode == 0, proc.stderr
    assert "batch 0:" in proc.stdout and "batch 1:" in proc.stdout and "level after" in proc.stdout
    assert len((out / "curriculum.jsonl").read_text().splitlines()) == 2
    again = cli("eval", "--resume", str(out))
    assert again.returncode != 0 and "is a curriculum run, which cannot be resumed" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["rubric_demo", "-n", "4"], "declares no difficulty space"),
        (["arith"], "--curriculum needs --num-tasks"),
        (["arith", "-n", "4", "--shuffle"], "cannot be combined with --shuffle"),
        (["arith", "-n", "4", "--band", "0.8,0.2"], "--band"),
    ],
)
def test_curriculum_refusals_are_one_line(args: list[str], needle: str, tmp_path: Path) -> None:
    proc = cli("eval", *args, "--curriculum", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
               "--out", str(tmp_path / "r"))  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], proc.stderr
    assert not (tmp_path / "r").exists()


def test_info_shows_the_difficulty_space() -> None:
    proc = cli("info", "textops", "--difficulty", "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["difficulty_level"].startswith("levels 1, 2, 3; start 1.")
    assert info["difficulty_ladder"] == "level=1 < level=2 < level=3"
    plain = json.loads(cli("info", "textops", "--json").stdout)
    assert not any(k.startswith("difficulty") for k in plain)  # without the flag nothing is loaded


def test_tasks_at_stamp_the_point_the_run_reads_back() -> None:
    task = next(iter(load_environment("textops").tasks_at({"level": 3}, "test", seed=1)))
    assert task.metadata[POINT_KEY] == {"level": 3} and task.id == "test-1-0@level=3"


@pytest.mark.model
@pytest.mark.slow
async def test_the_embedded_model_runs_under_the_curriculum(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    try:
        local_model_path("smollm2")
    except Exception as exc:  # pragma: no cover - CI installs it
        pytest.skip(f"embedded model not installed: {exc}")
    run = await evaluate_curriculum(
        "textops",
        model="local:smollm2",
        out=tmp_path / "run",
        num_tasks=4,
        batch_size=2,
        rollouts=2,
        sampling=Sampling(max_tokens=32),
        options=EvalOptions(concurrency=4),
    )
    assert [b.tasks for b in run.batches] == [2, 2] and all(b.graded == 4 for b in run.batches)
    assert run.curriculum is not None and run.curriculum.level in run.curriculum.ladder
    assert len((tmp_path / "run" / "curriculum.jsonl").read_text().splitlines()) == 2
