"""A real hub (``verihub hub serve`` on uvicorn, SQLite, its own review worker) on loopback:
``verihub push``, review, ``pip install`` and ``uv pip install`` (upload-time filter on) into
fresh virtualenvs, ``verihub install OWNER/ID``, a private environment invisible to another
user, and ``kill -9`` of the server during a push and during a review job.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.client.api import pack_bundle
from tests.venvs import child_venv

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


class Server:
    """``verihub hub serve`` in its own process group."""

    def __init__(self, data: Path, *, lease_s: float = 3.0) -> None:
        self.data, self.lease_s = data, lease_s
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        cmd = [
            sys.executable,
            "-m",
            "hub",
            "hub",
            "serve",
            "--data",
            str(self.data),
            "--port",
            str(self.port),
            "--review-fast",
            "--lease-s",
            str(self.lease_s),
        ]
        log = (self.data.parent / f"serve-{self.port}.log").open("ab")
        self.proc = subprocess.Popen(cmd, env=_env(), stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/simple/", timeout=2).read()
                return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the hub did not start")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def api(self, path: str, token: str | None = None) -> Any:
        from hub.client.api import hub_request

        return hub_request(self.url, path, token=token)

    def wait_state(
        self, ref: str, states: set[str], timeout: float = 300.0, token: str | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = self.api(f"/api/v1/envs/{ref}", token)["versions"][-1]
            if v["state"] in states:
                return dict(v)
            time.sleep(0.5)
        raise AssertionError(f"{ref} never reached {states}")


def _cli(
    *args: str, cfg: Path, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "hub", *args],
        env=_env(VERIHUB_CONFIG=str(cfg)),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


def _tokens(data: Path, cfg: Path) -> dict[str, str]:
    _cli("hub", "user", "add", "alice", "--data", str(data), cfg=cfg)
    _cli("hub", "user", "add", "bob", "--data", str(data), cfg=cfg)
    return {
        who: _cli(
            "hub", "token", "create", who, "--scope", "push", "--data", str(data), cfg=cfg
        ).stdout.strip()
        for who in ("alice", "bob")
    }


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Server, dict[str, str], Path]]:
    data, cfg = tmp_path / "hub", tmp_path / "config.toml"
    tokens = _tokens(data, cfg)
    server = Server(data).start()
    try:
        yield server, tokens, cfg
    finally:
        server.stop()


def _venv(path: Path, *, system: bool = False) -> Path:
    """A venv with pip; ``system``: it also sees the running interpreter's packages."""
    return child_venv(path, inherit=system, pip=True)


def _pip_env() -> dict[str, str]:
    # the machine's pip config points at local mirrors; the hub index alone is tested here
    return _env(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")


def test_push_review_and_install_with_pip_uv_and_verihub(
    live: tuple[Server, dict[str, str], Path], arith_bundle: Any, scaffold_bundle: Any, tmp_path: Path
) -> None:
    server, tokens, cfg = live
    out = _cli("login", "--hub", server.url, cfg=cfg, stdin=tokens["alice"] + "\n").stdout
    assert "logged in" in out and os.stat(cfg).st_mode & 0o777 == 0o600
    out = _cli("push", str(arith_bundle.bundle), cfg=cfg).stdout
    assert "alice/arith@0.1.0: published" in out
    # installable from the unreviewed index at once, from the reviewed index once review passed
    assert json.loads(
        urllib.request.urlopen(
            server.url + "/simple-unreviewed/verihub-arith/?format=application/vnd.pypi.simple.v1%2Bjson"
        ).read()
    )["versions"] == ["0.1.0"]
    out = _cli("push", str(scaffold_bundle.bundle), "--private", cfg=cfg).stdout
    assert "alice/hubtest_server_env@0.1.0" in out
    assert server.wait_state("alice/arith", {"passed", "failed"})["state"] == "passed"
    # `verihub search` reads the logged-in hub's catalogue (its arith is shadowed by the shipped one)
    found = _cli("search", "arith", cfg=cfg)
    assert f"arith@0.1.0 from {server.url}/api/v1/catalogue.json ignored" in found.stderr
    status = _cli("hub", "status", "alice/arith@0.1.0", "--data", str(server.data), cfg=cfg).stdout
    assert "passed" in status and "PASSED" in status
    assert (
        server.wait_state("alice/hubtest_server_env", {"passed", "failed"}, 300, tokens["alice"])["state"]
        == "passed"
    )

    # plain pip, fresh venv, only the hub as index
    py = _venv(tmp_path / "venv-pip")
    pip = [str(py), "-m", "pip", "install", "-q", "--no-deps", "--index-url", f"{server.url}/simple/"]
    subprocess.run([*pip, "verihub-arith"], check=True, env=_pip_env(), timeout=300)
    probe = (
        "import importlib.metadata as m; d = m.distribution('verihub-arith'); "
        "print(d.version, [e.name for e in d.entry_points if e.group == 'verihub.environments'])"
    )
    got = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, check=True).stdout
    assert got.strip() == "0.1.0 ['arith']"
    # the private one: 404 to pip without a token, installs with the owner's
    denied = subprocess.run(
        [*pip, "verihub-hubtest-server-env"], env=_pip_env(), capture_output=True, text=True, timeout=300
    )
    assert denied.returncode != 0
    bob_url = f"http://bob:{tokens['bob']}@127.0.0.1:{server.port}/simple/"
    denied = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--index-url",
            bob_url,
            "verihub-hubtest-server-env",
        ],
        env=_pip_env(),
        capture_output=True,
        text=True,
    )
    assert denied.returncode != 0 and tokens["bob"] not in denied.stderr
    alice_url = f"http://__token__:{tokens['alice']}@127.0.0.1:{server.port}/simple/"
    subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--index-url",
            alice_url,
            "verihub-hubtest-server-env",
        ],
        env=_pip_env(),
        check=True,
        timeout=300,
    )

    # uv, with upload-time filtering on: a cutoff after the upload installs, one before refuses
    subprocess.run([str(py), "-m", "pip", "install", "-q", "uv"], env=_env(), check=True, timeout=600)
    uv = [
        str(py.parent / "uv"),
        "pip",
        "install",
        "--python",
        str(py),
        "--no-deps",
        "--reinstall",
        "--index-url",
        f"{server.url}/simple/",
    ]
    subprocess.run(
        [*uv, "--exclude-newer", "2100-01-01T00:00:00Z", "verihub-arith"],
        check=True,
        env=_pip_env(),
        capture_output=True,
        timeout=300,
    )
    old = subprocess.run(
        [*uv, "--exclude-newer", "2001-01-01T00:00:00Z", "verihub-arith"],
        env=_pip_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert old.returncode != 0 and "exclude-newer" in old.stderr

    # verihub install OWNER/ID: resolves through the API, verifies, installs (venv sees verihub's deps)
    vpy = _venv(tmp_path / "venv-verihub", system=True)
    proc = subprocess.run(
        [str(vpy), "-m", "hub", "install", "alice/hubtest_server_env", "--no-deps"],
        env={**_pip_env(), "VERIHUB_CONFIG": str(cfg)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hash verified" in proc.stdout
    check = "from hub.registry.entrypoints import load_environment as l; print(l('hubtest_server_env').id)"
    got = subprocess.run([str(vpy), "-c", check], env=_env(), capture_output=True, text=True)
    assert got.stdout.strip() == "hubtest_server_env", got.stderr
    # bob cannot even resolve it
    bob_cfg = tmp_path / "bob.toml"
    _cli("login", "--hub", server.url, "--token", tokens["bob"], cfg=bob_cfg)
    proc = subprocess.run(
        [str(vpy), "-m", "hub", "install", "alice/hubtest_server_env"],
        env={**_pip_env(), "VERIHUB_CONFIG": str(bob_cfg)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "404" in proc.stderr
    _cli("logout", cfg=cfg)
    assert "token" not in cfg.read_text()

    # administration through the CLI: yank (hidden from resolution, still listed), revoke
    data = str(server.data)
    _cli("hub", "yank", "alice/arith@0.1.0", "--reason", "bad grader", "--data", data, cfg=cfg)
    v = server.api("/api/v1/envs/alice/arith")["versions"][0]
    assert v["yanked"] and v["yank_reason"] == "bad grader"
    assert "yanked (bad grader)" in _cli("hub", "status", "alice/arith", "--data", data, cfg=cfg).stdout
    _cli("hub", "token", "revoke", tokens["bob"], "--data", data, cfg=cfg)
    refused = _cli("login", "--hub", server.url, "--token", tokens["bob"], cfg=bob_cfg, check=False)
    assert refused.returncode == 1 and "401" in refused.stderr


def _consistent(data: Path) -> tuple[int, list[str]]:
    """(versions, problems): every version has its three files, their blobs and a job."""
    from hub.server.core.config import HubConfig
    from hub.server.core.db import make_engine, sessions
    from hub.server.core.models import Job, Version

    engine = make_engine(HubConfig(data=data).database)
    problems = []
    with sessions(engine)() as s:
        rows = list(s.query(Version))
        for v in rows:
            kinds = sorted(f.kind for f in v.files)
            if kinds != ["bundle", "sdist", "wheel"]:
                problems.append(f"{v.version}: files {kinds}")
            for f in v.files:
                blob = data / "blobs" / f.sha256[:2] / f.sha256[2:]
                if not blob.is_file() or blob.stat().st_size != f.size:
                    problems.append(f"{f.filename}: blob missing or short")
            if s.query(Job).filter(Job.version_id == v.id).count() != 1:
                problems.append(f"{v.version}: no job")
    engine.dispose()
    return len(rows), problems


def test_kill_9_during_push_and_review(tmp_path: Path, arith_bundle: Any) -> None:
    data, cfg = tmp_path / "hub", tmp_path / "config.toml"
    tokens = _tokens(data, cfg)
    archive = pack_bundle(arith_bundle.bundle, tmp_path / "arith.tar.gz")
    from hub.client.api import HubError, hub_request

    for delay in (0.05, 0.3, 0.6):  # the push takes about a second: kill it at several points
        server = Server(data, lease_s=3.0).start()
        answer: list[Any] = []

        def push(url: str = server.url, answer: list[Any] = answer) -> None:  # noqa: B006
            try:
                answer.append(
                    hub_request(url, "/api/v1/push", token=tokens["alice"], method="POST", body=archive)
                )
            except HubError as exc:
                answer.append(exc)

        t = threading.Thread(target=push)
        t.start()
        time.sleep(delay)
        server.kill9()
        t.join()
        n, problems = _consistent(data)
        assert problems == [] and n in (0, 1), (delay, problems)
        if n == 1:
            break
    # restart: the push goes through (or is reported as already there), and the review runs
    server = Server(data, lease_s=3.0).start()
    try:
        res = hub_request(server.url, "/api/v1/push", token=tokens["alice"], method="POST", body=archive)
        assert res["ref"] == "alice/arith"
        server.wait_state("alice/arith", {"running"}, 120)
        time.sleep(1.0)
        server.kill9()  # the worker child sees its parent gone and stops; the job keeps its lease
    finally:
        server.stop()
    server = Server(data, lease_s=3.0).start()
    try:
        done = server.wait_state("alice/arith", {"passed", "failed"}, 300)
        assert done["state"] == "passed"
        report = server.api("/api/v1/envs/alice/arith/0.1.0")["report"]
        assert report["attempt"] >= 2  # the killed attempt did not finish; the job ran again
        assert _consistent(data) == (1, [])
    finally:
        server.stop()


def test_push_a_package_folder(
    live: tuple[Server, dict[str, str], Path], local_model: None, tmp_path: Path
) -> None:
    """`verihub push FOLDER` builds the bundle exactly as `verihub submit` does (build, check,
    smoke evaluation with the default model) and publishes it; the review then passes."""
    from hub.review.scaffold import scaffold

    server, tokens, cfg = live
    src = scaffold("hubtest_push_src", dest=tmp_path / "src")
    out = _cli("push", str(src), "--hub", server.url, "--token", tokens["bob"], cfg=cfg).stdout
    assert "bob/hubtest_push_src@0.1.0: published" in out
    assert server.wait_state("bob/hubtest_push_src", {"passed", "failed"})["state"] == "passed"
    report = server.api("/api/v1/envs/bob/hubtest_push_src/0.1.0")["report"]
    assert report["problems"] == [] and "PASSED" in report["check_text"]
