"""Run INSIDE the verifiers 0.3.1 test venv (tests/hub/test_verifiers_legacy.py starts pytest on
this folder there; tests/hub/vf_venvs.py builds it).

A real ``vf-eval`` run (verifiers 0.3.x, classic API, its defaults: env server on) on a verihub
environment through :mod:`hub.train.verifiers_env`.

Before the fix, ``to_verifiers`` set the verifiers ``env_id`` to the verihub id (``arith``); the
env-server workers import a module named after it, failed, and vf-eval retried forever ("Failed
to import environment module arith"). Checked by hand with a module whose load_environment resets
``env_id`` to ``"arith"``: vf-eval then loops until killed. The timeout makes a hang fail the test.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

vf = pytest.importorskip(
    "verifiers", reason="verifiers is not installed (pip install 'verihub[verifiers-legacy]')"
)

from hub.train.verifiers_adapter import VF_ENV_MODULE, installed_api, to_verifiers  # noqa: E402

pytestmark = pytest.mark.skipif(installed_api()[0] != "classic", reason="needs verifiers 0.3.x (classic API)")

REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env["VERIHUB_VF_KEY"] = "unused"
    return env


def test_to_verifiers_names_an_importable_module_with_its_arguments() -> None:
    vf_env = to_verifiers("arith", split="test", n=2)
    assert vf_env.env_id == VF_ENV_MODULE
    assert vf_env.env_args["env"] == "arith" and vf_env.env_args["n"] == 2
    # what the env-server worker does: import the module named by env_id, call load_environment
    rebuilt = vf.load_environment(env_id=vf_env.env_id, **vf_env.env_args)
    assert rebuilt.env_id == VF_ENV_MODULE
    assert [r["prompt"] for r in rebuilt.get_eval_dataset()] == [
        r["prompt"] for r in vf_env.get_eval_dataset()
    ]


@pytest.mark.skipif(shutil.which("vf-eval") is None, reason="vf-eval is not on PATH")
def test_vf_eval_with_its_defaults_runs_a_verihub_env(tmp_path: Path) -> None:
    port = _free_port()
    env = _env()
    server = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        cmd = [
            "vf-eval", VF_ENV_MODULE, "-a", json.dumps({"env": "arith", "n": 3}),
            "-m", "fake", "-b", f"http://127.0.0.1:{port}/v1", "-k", "VERIHUB_VF_KEY",
            "-n", "2", "-r", "1", "-t", "16", "--disable-tui", "--save-results", "-o", str(tmp_path),
        ]  # fmt: skip
        proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    finally:
        server.terminate()
        server.wait(10)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (run,) = (tmp_path / "evals").glob(f"{VF_ENV_MODULE}--fake/*")
    assert (run / "env_worker_0.log").exists(), "vf-eval did not use its env server"
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["info"]["task_id"].startswith("train-")
        assert row["completion"][-1]["content"] == "Answer: 42"
        expected = 1.0 if json.loads(row["answer"]) == "42" else 0.0  # the fake server says 42
        assert row["metrics"]["verihub_reward"] == row["reward"] == expected
