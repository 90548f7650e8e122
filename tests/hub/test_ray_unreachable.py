"""An unreachable Ray cluster fails fast with a clear message instead of hanging.

Without the probe (hub.run.ray_grading.check_ray_reachable), `ray.init` on a stale cluster file
was measured waiting over two minutes (killed by `timeout 100`) before any error.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")


def _dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def _eval(tmp_path: Path, *extra: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    cmd = [sys.executable, "-m", "hub", "eval", "arith", "-m", "fake", "--base-url", "http://127.0.0.1:1/v1"]
    cmd += ["-n", "2", "--no-progress", "--grade-on", "ray", "--out", str(tmp_path / "run"), *extra]
    started = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    return result, time.monotonic() - started


def test_an_unreachable_ray_address_fails_fast(tmp_path: Path) -> None:
    port = _dead_port()
    result, _ = _eval(tmp_path, "--ray-address", f"127.0.0.1:{port}", env={"RAY_TMPDIR": str(tmp_path)})
    assert result.returncode == 1, result.stderr
    assert f"no Ray cluster answers at 127.0.0.1:{port} (--ray-address" in result.stderr
    assert not (tmp_path / "run").exists()  # nothing written


def test_a_stale_local_cluster_file_fails_fast(tmp_path: Path) -> None:
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{_dead_port()}\n")
    result, _ = _eval(tmp_path, env={"RAY_TMPDIR": str(tmp_path)})
    assert result.returncode == 1, result.stderr
    assert "ray_current_cluster names 127.0.0.1:" in result.stderr and "ray stop" in result.stderr


def test_a_malformed_address_is_a_usage_error(tmp_path: Path) -> None:
    result, _ = _eval(tmp_path, "--ray-address", "not-an-address", env={"RAY_TMPDIR": str(tmp_path)})
    assert result.returncode == 1 and "is not HOST:PORT" in result.stderr
