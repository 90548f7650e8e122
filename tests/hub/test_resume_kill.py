"""kill -9 at arbitrary moments, then resume: every (task, rollout_index) exactly once."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from hub.run.rundir import RunDir


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def _wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("fake server did not start")


def _has_lines(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


@pytest.fixture
def slow_server() -> object:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hub.run.fake_server",
            "--port",
            str(port),
            "--schedule",
            "slow,ok",
            "--slow-s",
            "0.1",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        _wait_port(port)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_kill_9_and_resume(tmp_path: Path, slow_server: str) -> None:
    out = tmp_path / "run"
    tasks, rollouts = 40, 5
    base = [sys.executable, "-m", "hub", "eval", "--no-progress"]
    first = base + [
        "arith",
        "--model",
        "fake",
        "--base-url",
        slow_server,
        "-n",
        str(tasks),
        "-r",
        str(rollouts),
        "-c",
        "8",
        "--out",
        str(out),
    ]
    rng = random.Random(7)
    cmd = first
    kills = 0
    for _ in range(4):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # let the run really start (start-up is slow on a loaded machine), then kill at a random moment
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and not _has_lines(out / "rollouts.jsonl"):
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        cmd = base + ["--resume", str(out)]
        if RunDir(out).summary_path.exists():
            break
    final = subprocess.run(base + ["--resume", str(out)], capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    assert kills >= 1, "the run finished before any kill; make it slower"
    rd = RunDir(out)
    counts = Counter((r.task_id, r.rollout_index) for r in rd.iter_rollouts())
    assert len(counts) == tasks * rollouts
    assert set(counts.values()) == {1}
    summary = json.loads(rd.summary_path.read_text())
    assert summary["n_rollouts"] == tasks * rollouts and summary["n_errors"] == 0
