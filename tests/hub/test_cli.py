"""The CLI on bad input: one-line errors, non-zero exits, no tracebacks, nothing lost."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

VERIHUB = [sys.executable, "-m", "hub"]


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # no user config: only the shipped catalogue, unless a test names one
    base = {**os.environ, "COLUMNS": "200", "VERIHUB_CONFIG": "/nonexistent/verihub.toml"}
    return subprocess.run(
        [*VERIHUB, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**base, **(env or {})},
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


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    """A loopback fake model server in its own process (answers "Answer: 42")."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None and "listening" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory, fake_url: str) -> Path:
    """A finished run of 3 arith tasks (tests copy it before changing it)."""
    out = tmp_path_factory.mktemp("runs") / "done"
    proc = cli("eval", "arith", "-n", "3", "--model", "m", "--base-url", fake_url, "--out", str(out),
               "--no-progress")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


def test_unknown_environment_suggests_close_matches() -> None:
    proc = cli("eval", "arithh", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert_one_line_error(proc)
    assert proc.stderr.strip() == (
        "error: no installed environment 'arithh'. Did you mean 'arith'? "
        "See `verihub list` for what is installed."
    )


def test_uninstalled_catalogue_environment_says_how_to_install(tmp_path: Path) -> None:
    entry = {"id": "sudoku", "version": "1.0.0", "install": {"kind": "pypi", "name": "verihub-sudoku"}}
    (tmp_path / "extra.json").write_text(json.dumps({"schema_version": 1, "environments": [entry]}))
    (tmp_path / "config.toml").write_text('[hub]\ncatalogues = ["extra.json"]\n')
    proc = cli(
        "eval", "sudoku", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
        env={"VERIHUB_CONFIG": str(tmp_path / "config.toml")},
    )  # fmt: skip
    assert_one_line_error(proc)
    assert proc.stderr.strip() == (
        "error: no installed environment 'sudoku'. Install it with `verihub install sudoku`. "
        "See `verihub list` for what is installed."
    )


def test_only_the_requested_entry_point_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    from graders.exact import ExactGrader
    from hub import SingleTurnEnv, Task
    from hub.env.errors import UnknownEnvironmentError
    from hub.registry import entrypoints as registry

    class FakeEntryPoint:
        def __init__(self, name: str, factory: Callable[..., object] | None) -> None:
            self.name, self.value, self.dist, self._factory = name, f"fake_{name}:load", None, factory

        def load(self) -> Callable[..., object]:
            if self._factory is None:
                raise AssertionError(f"entry point {self.name!r} was imported")
            return self._factory

    def toy() -> SingleTurnEnv:
        return SingleTurnEnv(tasks=[Task(id="a", prompt="p", answer="1")], grader=ExactGrader())

    eps = {"toy": FakeEntryPoint("toy", toy), "other": FakeEntryPoint("other", None)}
    monkeypatch.setattr(registry, "_entry_points", lambda: eps)
    env = registry.load_environment("toy")
    assert env.id == "toy"
    assert {"toy", "other"} <= {e.id for e in registry.list_environments()}  # listing imports nothing
    with pytest.raises(UnknownEnvironmentError):
        registry.load_environment("missing")


def test_rejected_environment_argument() -> None:
    proc = cli("eval", "arith", "-n", "2", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
               "--env-arg", "difficulty=9")  # fmt: skip
    assert_one_line_error(
        proc,
        "environment 'arith' rejected its arguments difficulty=9",
        "ValueError: ",
        "9",
        "it accepts (difficulty: int = 0)",
        "--env-arg",
    )
    assert proc.returncode == 1


def test_unusable_out_directory(tmp_path: Path, fake_url: str) -> None:
    (tmp_path / "file").write_text("x")
    proc = cli("eval", "arith", "-n", "2", "--model", "m", "--base-url", fake_url,
               "--out", str(tmp_path / "file" / "sub"))  # fmt: skip
    assert_one_line_error(proc, "cannot create the run directory", "is a file", "--out")
    assert proc.returncode == 1 and (tmp_path / "file").read_text() == "x"
    if Path("/proc/self").exists():  # mkdir under /proc fails even for root
        proc = cli("eval", "arith", "-n", "2", "--model", "m", "--base-url", fake_url, "--out", "/proc/x")
        assert_one_line_error(proc, "cannot create the run directory /proc/x", "--out")
        assert proc.returncode == 1


def test_base_url_without_v1_is_caught_before_writing(tmp_path: Path, fake_url: str) -> None:
    root = fake_url.removesuffix("/v1")
    proc = cli("eval", "arith", "-n", "2", "--model", "m", "--base-url", root, "--out", str(tmp_path / "r"))
    assert_one_line_error(proc, "HTTP 404", f"try --base-url {root}/v1")
    assert proc.returncode == 1 and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_resume_refuses_flags_that_define_the_run(finished_run: Path) -> None:
    before = {p.name: p.read_bytes() for p in finished_run.iterdir()}
    proc = cli("eval", "--resume", str(finished_run), "-n", "50", "-r", "7", "--seed", "3",
               "--temperature", "1.5", "--base-url", "http://127.0.0.1:9/v1")  # fmt: skip
    assert_one_line_error(
        proc,
        "--num-tasks, --rollouts, --seed, --temperature cannot change on --resume",
        "reuses the run's saved config",
    )
    for flags in (["arith"], ["--env-arg", "difficulty=2"], ["--max-tokens", "9"], ["-o", "x"]):
        proc = cli("eval", "--resume", str(finished_run), *flags)
        assert_one_line_error(proc, "cannot change on --resume")
    assert {p.name: p.read_bytes() for p in finished_run.iterdir()} == before


def test_resume_takes_operational_flags_and_a_corrected_base_url(
    tmp_path: Path, finished_run: Path, fake_url: str
) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    lines = (run / "rollouts.jsonl").read_text().splitlines(keepends=True)
    (run / "rollouts.jsonl").write_text(lines[0])  # interrupted after one rollout
    (run / "summary.json").unlink()
    config = json.loads((run / "config.json").read_text())
    config["base_url"] = f"http://127.0.0.1:{free_port()}/v1"  # the server moved
    (run / "config.json").write_text(json.dumps(config))
    assert_one_line_error(cli("eval", "--resume", str(run)), "cannot reach", "--base-url")
    proc = cli("eval", "--resume", str(run), "--base-url", fake_url, "--concurrency", "2", "--timeout", "5",
               "--max-retries", "1", "--grade-timeout", "5", "--rpm", "6000", "--tpm", "1000000",
               "--api-key-env", "NO_SUCH_KEY", "--grade-on", "local", "--no-progress")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    saved = [json.loads(ln) for ln in (run / "rollouts.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in saved) == sorted(json.loads(ln)["task_id"] for ln in lines)
    assert json.loads((run / "config.json").read_text())["base_url"] == fake_url
    assert (run / "summary.json").exists()


def test_show_prints_the_summary_table(finished_run: Path) -> None:
    summary = json.loads((finished_run / "summary.json").read_text())
    task_ids = [t["task_id"] for t in summary["per_task"]]
    proc = cli("show", str(finished_run), "--tasks", "2")
    assert proc.returncode == 0, proc.stderr
    rows = _rows(proc.stdout)
    assert "arith @ m" in proc.stdout
    assert rows["tasks x rollouts"] == "3 x 1" and rows["rollouts recorded"] == "3"
    assert rows["errors"] == "0" and rows["mean reward"] == f"{summary['mean_reward']:.4f}"
    assert rows["pass@1"] == f"{summary['pass_at_k']['1']:.4f}"
    assert rows["tokens"] == "30 in / 9 out" and rows["run directory"] == str(finished_run)
    assert "per task" in proc.stdout
    assert rows[task_ids[0]].split() == ["1", "0", "0.00", "0"]
    assert task_ids[1] in rows and task_ids[2] not in rows


def test_regrade_reports_changed_verdicts(tmp_path: Path, finished_run: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    lines = (run / "rollouts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["reward"], first["passed"] = 1.0, True  # tampered: the fake model is always wrong
    (run / "rollouts.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    proc = cli("regrade", str(run))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "regraded 3 rollouts; 1 verdicts changed"
    rows = _rows(proc.stdout)
    assert rows["mean reward"] == "0.0000" and rows["rollouts recorded"] == "3"
    assert (
        json.loads(lines[0])["reward"]
        == json.loads((run / "rollouts.jsonl").read_text().splitlines()[0])["reward"]
    )
    proc = cli("regrade", str(run))
    assert proc.stderr.strip() == "regraded 3 rollouts; 0 verdicts changed"


def _rows(table: str) -> dict[str, str]:
    """``first cell -> the other cells`` of every row of rich tables printed as text."""
    out: dict[str, str] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) >= 2 and cells[0]:
            out[cells[0]] = " ".join(cells[1:])
    return out


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
