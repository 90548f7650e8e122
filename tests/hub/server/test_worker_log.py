"""``verihub hub worker`` says what it does: a start line, each job's outcome, and on SIGTERM that it
stops (after the job in hand) and how many jobs it did, exiting 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_worker_logs_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "hub"
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIHUB_HUB")}
    subprocess.run(
        [sys.executable, "-m", "hub", "hub", "migrate", "--data", str(data)], check=True, env=env, timeout=120
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "hub", "worker", "--data", str(data)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        first = ""
        while "started" not in first:
            assert time.monotonic() < deadline, "the worker never said it started"
            first = proc.stderr.readline()
        assert f"data {data}" in first
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, rest
    assert "SIGTERM received" in rest and "stopped after 0 job(s)" in rest
