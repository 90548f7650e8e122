"""The CLI on bad input: one-line errors, non-zero exits, no tracebacks, nothing lost."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

VERIHUB = [sys.executable, "-m", "hub"]


def cli(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*VERIHUB, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0], lines[0]


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def test_unknown_environment_suggests_close_matches() -> None:
    assert_one_line_error(
        cli("eval", "arihm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"),
        "'arihm'",
        "Did you mean 'arith'",
        "verihub list",
    )


def test_uninstalled_catalogue_environment_says_how_to_install() -> None:
    proc = cli("info", "nosuchenv")
    assert_one_line_error(proc, "nosuchenv")


def test_bad_model_url(tmp_path: Path) -> None:
    assert_one_line_error(
        cli(
            "eval",
            "arith",
            "-n",
            "2",
            "--model",
            "m",
            "--base-url",
            "localhost:8000",
            "--out",
            str(tmp_path / "r"),
        ),
        "not an http(s) URL",
    )


def test_unreachable_endpoint(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    proc = cli("eval", "arith", "-n", "2", "--model", "m", "--base-url", url, "--out", str(tmp_path / "r"))
    assert_one_line_error(proc, "cannot reach", "--base-url")
    assert not (tmp_path / "r").exists()


def test_invalid_flag() -> None:
    proc = cli("eval", "arith", "--rollouts", "0", "--model", "m")
    assert_one_line_error(proc, "--rollouts", "--help")
    proc = cli("eval", "arith", "--frobnicate")
    assert_one_line_error(proc, "frobnicate")


def test_missing_model() -> None:
    assert_one_line_error(cli("eval", "arith", "-n", "1"), "--model")


def test_unlimited_env_needs_num_tasks(tmp_path: Path) -> None:
    assert_one_line_error(
        cli("eval", "arith", "--model", "local:smollm2", "--out", str(tmp_path / "r")), "--num-tasks"
    )


def test_resume_of_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert_one_line_error(cli("eval", "--resume", str(tmp_path)), "not a verihub run directory")
    assert (tmp_path / "notes.txt").read_text() == "hello"
    assert_one_line_error(cli("eval", "--resume", str(tmp_path / "missing")), "does not exist")


def test_resume_of_a_malformed_directory(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"env_id": "arith"}))
    (tmp_path / "rollouts.jsonl").write_text('{"task_id": "x"}\n')
    assert_one_line_error(cli("eval", "--resume", str(tmp_path)), "config")
    assert (tmp_path / "rollouts.jsonl").read_text() == '{"task_id": "x"}\n'


def test_list_and_info() -> None:
    proc = cli("list", "--json")
    assert proc.returncode == 0
    ids = {e["id"]: e for e in json.loads(proc.stdout)}
    assert ids["arith"]["installed"] and ids["textops"]["installed"]
    proc = cli("info", "arith")
    assert proc.returncode == 0 and "verihub-arith" in proc.stdout


@pytest.mark.parametrize("args", [["--help"], ["eval", "--help"], ["show", "--help"], ["regrade", "--help"]])
def test_help(args: list[str]) -> None:
    proc = cli(*args)
    assert proc.returncode == 0 and "Usage" in proc.stdout
