"""A hub evaluation end to end: the arith bundle is pushed and reviewed, an admin queues an
evaluation against a loopback OpenAI-compatible server, the worker runs the reviewed wheel in the
sandbox with the model client outside it, and the run is recorded as one the hub ran itself.
The endpoint's key, read from the worker's environment, appears nowhere in what the hub keeps."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from hub.run.rundir import RunConfig
from hub.sandbox import unavailable_reason
from hub.server.core.models import HubEval, Job, Run, Version
from hub.server.worker import work

NEEDS_SANDBOX = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
KEY = "sk-hubeval-test-9f3c1e7d"


@pytest.fixture
def endpoint() -> Iterator[str]:
    """A loopback fake model server in its own process (answers "Answer: 42")."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
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


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@NEEDS_SANDBOX
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_hub_evaluation_runs_in_the_sandbox_and_is_recorded_as_the_hubs(
    hub: Any,
    arith_bundle: Any,
    packed: Callable[[Path], Path],
    endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = hub.push(packed(arith_bundle.bundle))
    assert r.status_code == 201, r.text
    make = hub.sessions()
    with make() as s, s.begin():  # the review is not what this test is about
        s.execute(update(Job).values(state="passed"))
        s.execute(update(Version).values(state="passed"))
        version = s.scalars(select(Version)).one()
        env_ref = f"{version.environment.owner.name}/{version.environment.env_id}"
        number, content_hash = version.version, version.content_hash
    ref = f"{env_ref}@{number}"
    monkeypatch.setenv("HUBEVAL_TEST_KEY", KEY)  # the worker's environment, never the hub's data
    body = {"ref": ref, "model": "fake-model", "base_url": endpoint, "api_key_env": "HUBEVAL_TEST_KEY"}
    r = hub.client.post("/api/v1/hub-evals", json={**body, "num_tasks": 3}, headers=hub.auth("root"))
    assert r.status_code == 201, r.text
    eval_id = r.json()["id"]

    assert work(hub.config, once=True) >= 1  # the evaluation, then the re-grade of its run
    got = hub.client.get(f"/api/v1/hub-evals/{eval_id}", headers=hub.auth("root")).json()
    assert got["state"] == "done", got
    run = hub.client.get(f"/api/v1/results/{got['run']}").json()
    assert run["origin"] == "hub" and run["owner"] == "root" and run["endpoint"] == endpoint
    assert run["model"] == "fake-model" and run["n_tasks"] == 3 and run["private"] is False
    assert run["regrade_state"] == "regraded_consistent", run  # the hub's own run re-grades like a pushed one
    with make() as s:
        row = s.scalars(select(Run).where(Run.public_id == got["run"])).one()
        assert row.origin == "hub" and row.rollouts_stored and s.get(HubEval, eval_id).run_id == row.id
        config = RunConfig.model_validate_json(row.config)
    assert config.base_url == endpoint and config.env_hash == content_hash

    board = hub.client.get(f"/{env_ref}/leaderboard", params={"origin": "hub"}).text
    assert "fake-model" in board and '<span class="hubrun">run by the hub</span></td>' in board
    pushed_only = hub.client.get(f"/{env_ref}/leaderboard", params={"origin": "pushed"}).text
    assert '<span class="hubrun">run by the hub</span></td>' not in pushed_only
    card = hub.client.get(f"/{env_ref}/v/{number}").text
    for text in (board, card, json.dumps(run), json.dumps(got)):
        assert KEY not in text
    assert _files_holding(hub.config.data, KEY.encode()) == []  # the database, the run's blobs
