"""verifiers 0.4.x (v1) in verihub: tests/hub/v1/checks_v1.py run by pytest inside a cached venv
with verifiers 0.4.0 and this checkout of verihub (tests/hub/vf_venvs.py), never in the main
environment. Skipped, saying why, when the venv cannot be built
(offline)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hub.vf_venvs import REPO, run_checks, venv_for

pytestmark = [pytest.mark.vf_venv, pytest.mark.slow]


@pytest.fixture(scope="session")
def vf04_venv() -> Path:
    try:
        return venv_for("vf04")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"cannot build the verifiers 0.4.0 test venv (PyPI unreachable?): {exc}")


def test_v1_tasksets_run_in_verihub(vf04_venv: Path) -> None:
    proc = run_checks(vf04_venv, ["tests/hub/v1/checks_v1.py"])
    tail = proc.stdout[-3000:] + proc.stderr[-1000:]
    assert proc.returncode == 0, tail
    match = re.search(r"(\d+) passed", proc.stdout)
    assert match and int(match.group(1)) >= 18 and "skipped" not in proc.stdout, tail


def _have_local_model() -> bool:
    try:
        from hub.run.local_model import local_model_path

        local_model_path("smollm2")
        import xllamacpp  # noqa: F401
    except Exception:
        return False
    return True


@pytest.mark.model
@pytest.mark.skipif(not _have_local_model(), reason="embedded model not installed (bash scripts/install.sh)")
def test_vf_eval_04_runs_arith_against_verihub_serve_model(vf04_venv: Path, tmp_path: Path) -> None:
    """The real vf-eval 0.4.0 (null harness, subprocess runtime) on `arith` through the
    `verihub-v1` taskset, against `verihub serve-model local:smollm2` from the main environment."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    main_env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve-model", "local:smollm2", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=main_env,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert "serving local:smollm2" in first, first
        venv_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        venv_env |= {"PYTHONPATH": str(REPO), "VH_KEY": "unused"}
        cmd = [
            str(vf04_venv / "bin" / "vf-eval"), "verihub-v1",
            "--env.taskset.env", "arith", "--env.taskset.n", "3",
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
            "-m", "smollm2", "--client.base-url", f"http://127.0.0.1:{port}/v1",
            "--client.api-key-var", "VH_KEY", "--no-push", "-n", "2", "-r", "1",
            "--sampling.max-tokens", "32", "-o", str(tmp_path),
        ]  # fmt: skip
        proc = subprocess.run(cmd, cwd=tmp_path, env=venv_env, capture_output=True, text=True, timeout=300)
    finally:
        server.terminate()
        server.wait(20)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-1000:]
    (traces,) = tmp_path.glob("verihub-v1--smollm2--null--*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 2
    for ep in episodes:
        (trace,) = ep["traces"]
        assert trace["ok"], trace["errors"]
        grade = trace["info"]["verihub_grade"]
        assert trace["rewards"]["verihub_reward"]["score"] == grade["score"]
        assert grade["status"] in ("correct", "incorrect", "partial")  # a verdict, not a grader error
        assert trace["nodes"][-1]["message"]["role"] == "assistant"
