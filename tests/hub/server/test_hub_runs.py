"""Runs the hub ran itself, without a sandbox or a model: how they are recorded (origin ``hub``,
the endpoint, the admin who asked), marked and filtered on the leaderboards and cards, that a
push can never claim that origin, and who may queue a hub evaluation (API and CLI).

The end-to-end run of a real wheel in the sandbox is in ``test_hub_eval_e2e.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_seed import Seeded, seed  # noqa: E402

from hub.client.runpack import pack_run  # noqa: E402
from hub.server.accounts.users import Principal  # noqa: E402
from hub.server.core.models import EnvFile, HubEval, Owner, Run, Version  # noqa: E402
from hub.server.results.runs import ingest_hub_run  # noqa: E402
from leaderboard.testing import fake_env_hash, write_run  # noqa: E402

#: The mark in a run's row of a table (the notes that explain it are not followed by ``</td>``).
ROW_BADGE = '<span class="hubrun">run by the hub</span></td>'
ENDPOINT = "http://127.0.0.1:9/v1"


@pytest.fixture
def seeded(hub: Any, tmp_path: Path) -> Seeded:
    return seed(hub, tmp_path / "runs")


def _toy_run(tmp: Path, name: str, model: str) -> Path:
    return write_run(
        tmp / name,
        env_id="toy",
        env_version="1.0.0",
        model=model,
        rewards=[[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
        env_hash=fake_env_hash("toy", "1.0.0"),
    )


def _hub_run(hub: Any, tmp: Path, model: str = "model-hubbed") -> str:
    """A run recorded the way the worker records one it made (as root, the admin)."""
    archive = pack_run(_toy_run(tmp, model, model), tmp / f"{model}.tar.gz")
    make = hub.sessions()
    with make() as s:
        root = s.scalars(select(Owner).where(Owner.name == "root")).one()
        who = Principal(root.id, root.name, "admin", True)
    got = ingest_hub_run(
        make,
        hub.client.app.state.storage,
        hub.config.limits,
        who,
        archive,
        env_ref="alice/toy",
        endpoint=ENDPOINT,
    )
    assert got.created
    return str(got.run["id"])


def _page(hub: Any, url: str, **query: str) -> str:
    """The page's text without its filter form (which lists every model to choose from)."""
    r = hub.client.get(url, params=query)
    assert r.status_code == 200, r.text
    return re.sub(r'<form class="filters".*?</form>', "", r.text, flags=re.S)


@pytest.mark.slow
def test_a_hub_run_is_recorded_marked_and_filtered(hub: Any, seeded: Seeded, tmp_path: Path) -> None:
    rid = _hub_run(hub, tmp_path)
    shown = hub.client.get(f"/api/v1/results/{rid}").json()  # public: anyone sees it
    assert shown["origin"] == "hub" and shown["pushed"] is False and shown["endpoint"] == ENDPOINT
    assert shown["owner"] == "root" and shown["verify_state"] == "pending"
    pushed = hub.client.get(f"/api/v1/results/{seeded.ids['strong']}").json()
    assert pushed["origin"] == "pushed" and pushed["pushed"] is True and pushed["endpoint"] is None
    listed = {r["id"]: r["origin"] for r in hub.client.get("/api/v1/envs/alice/toy/results").json()}
    assert listed[rid] == "hub" and listed[seeded.ids["strong"]] == "pushed"
    with hub.sessions()() as s:
        row = s.scalars(select(Run).where(Run.public_id == rid)).one()
        assert row.origin == "hub" and row.endpoint == ENDPOINT and row.rollouts_stored

    for url in ("/alice/toy/leaderboard", "/leaderboard", "/alice/toy/v/1.0.0"):
        every = _page(hub, url)
        assert "model-a" in every, url
        if url != "/leaderboard":  # across environments: each one's newest version (1.1.0) ranks
            assert "model-hubbed" in every and ROW_BADGE in every, url
        only_hub = _page(hub, url, origin="hub")
        assert "model-hubbed" in only_hub and "model-a" not in only_hub, url
        assert ROW_BADGE in only_hub, url
        only_pushed = _page(hub, url, origin="pushed")
        assert "model-a" in only_pushed and "model-hubbed" not in only_pushed, url
        assert ROW_BADGE not in only_pushed, url
    card = hub.client.get("/alice/toy/v/1.0.0").text
    assert f"endpoint <code>{ENDPOINT}</code>" in card and "the hub (asked by root)" in card
    page = hub.client.get(f"/runs/{rid}").text
    assert '<span class="hubrun">run by the hub</span> against' in page and ENDPOINT in page
    assert "Pushed by alice" in hub.client.get(f"/runs/{seeded.ids['strong']}").text
    odd = hub.client.get("/alice/toy/leaderboard", params={"origin": "mine"}).text
    assert "is not hub or pushed; ignored" in odd and "model-hubbed" in odd and "model-a" in odd
    board = hub.client.get("/alice/toy/leaderboard", params={"origin": "hub"}).text
    assert 'value="hub" selected' in board and "Only runs <strong>the hub ran itself</strong>" in board


def test_a_push_cannot_claim_origin_hub(hub: Any, seeded: Seeded, tmp_path: Path) -> None:
    run = _toy_run(tmp_path, "claims", "model-claims")
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    config["origin"] = "hub"  # the upload says the hub ran it
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    archive = pack_run(run, tmp_path / "claims.tar.gz")
    for who in ("alice", "root"):  # not even an admin's push
        r = hub.client.post(
            "/api/v1/results",
            content=archive.read_bytes(),
            params={"env": "alice/toy", "public": "1", "origin": "hub", "endpoint": ENDPOINT},
            headers=hub.auth(who),
        )
        assert r.status_code == 201, r.text
        assert r.json()["origin"] == "pushed" and r.json()["endpoint"] is None
    with hub.sessions()() as s:
        assert s.scalars(select(Run.origin).where(Run.model == "model-claims")).all() == ["pushed"] * 2
        assert "hub" not in s.scalars(select(Run.origin)).all()


def _add_wheel(hub: Any) -> None:
    with hub.sessions()() as s, s.begin():
        version = s.scalars(select(Version).where(Version.version == "1.0.0")).first()
        assert version is not None
        s.add(
            EnvFile(
                version=version, kind="wheel", filename="toy-1.0.0-py3-none-any.whl", sha256="ab" * 32, size=1
            )
        )


def test_only_admins_queue_hub_evaluations(hub: Any, seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    body = {
        "ref": "alice/toy@1.0.0",
        "model": "m",
        "base_url": ENDPOINT,
        "num_tasks": 3,
        "api_key_env": "HUBKEY",
    }
    r = hub.client.post("/api/v1/hub-evals", json=body)
    assert r.status_code == 401
    for who in ("alice", "bob", "alice_read"):
        r = hub.client.post("/api/v1/hub-evals", json=body, headers=hub.auth(who))
        assert r.status_code == 403, (who, r.text)
    r = hub.client.post("/api/v1/hub-evals", json=body, headers=hub.auth("root"))
    assert r.status_code == 409 and "no reviewed wheel" in r.text  # the seeded versions have none
    _add_wheel(hub)
    for bad in ("http://user:sk-secret@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?key=sk-secret", "ftp://x/v1"):
        r = hub.client.post("/api/v1/hub-evals", json={**body, "base_url": bad}, headers=hub.auth("root"))
        assert r.status_code == 400 and "sk-secret" not in r.text, bad
    r = hub.client.post(
        "/api/v1/hub-evals", json={**body, "api_key_env": "sk-not-a-name"}, headers=hub.auth("root")
    )
    assert r.status_code == 400
    r = hub.client.post("/api/v1/hub-evals", json=body, headers=hub.auth("root"))
    assert r.status_code == 201, r.text
    queued = r.json()
    assert queued["state"] == "queued" and queued["requested_by"] == "root"
    assert queued["api_key_env"] == "HUBKEY" and queued["base_url"] == ENDPOINT
    assert hub.client.get(f"/api/v1/hub-evals/{queued['id']}", headers=hub.auth("alice")).status_code == 403
    assert hub.client.get(f"/api/v1/hub-evals/{queued['id']}", headers=hub.auth("root")).json() == queued


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def test_the_cli_queues_as_an_admin_only(
    hub: Any, seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_wheel(hub)
    data = str(hub.config.data)
    args = (
        "hub",
        "eval",
        "alice/toy@1.0.0",
        "--model",
        "m",
        "--base-url",
        ENDPOINT,
        "-n",
        "2",
        "--data",
        data,
    )
    code, _out, err = cli(capsys, *args, "--as", "alice")
    assert code != 0 and "not an admin" in err
    code, out, err = cli(capsys, *args, "--as", "root", "--api-key-env", "HUBKEY", "--json")
    assert code == 0, err
    queued = json.loads(out)
    assert queued["ref"] == "alice/toy@1.0.0" and queued["num_tasks"] == 2 and queued["state"] == "queued"
    code, out, err = cli(capsys, *args, "--json")  # root is the only admin
    assert code == 0, err
    with hub.sessions()() as s:
        assert [e.requester.name for e in s.scalars(select(HubEval))] == ["root", "root"]


def test_a_hub_evaluation_without_its_wheel_ends_in_error(hub: Any, seeded: Seeded) -> None:
    from hub.server.worker import work

    _add_wheel(hub)  # a wheel row whose blob is not in the store
    body = {"ref": "alice/toy@1.0.0", "model": "m", "base_url": ENDPOINT, "num_tasks": 1}
    r = hub.client.post("/api/v1/hub-evals", json=body, headers=hub.auth("root"))
    assert r.status_code == 201
    assert work(hub.config, once=True) == 0  # dropped: nothing ran
    got = hub.client.get(f"/api/v1/hub-evals/{r.json()['id']}", headers=hub.auth("root")).json()
    assert got["state"] == "error" and "wheel is missing" in got["report"]["error"] and got["run"] is None
