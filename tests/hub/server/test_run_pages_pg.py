"""Run pages on a real PostgreSQL: a pushed run's rollouts stored (bytea transcripts), paged,
filtered, sorted, and a private run hidden, through the same application as on SQLite."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import Hub  # noqa: E402
from pg_cluster import pg_bin, postgres_cluster  # noqa: E402
from results_seed import _env  # noqa: E402
from test_run_pages import _listed, push  # noqa: E402

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        pg_bin() is None or importlib.util.find_spec("psycopg") is None,
        reason="needs PostgreSQL binaries and psycopg",
    ),
]


@pytest.fixture(scope="module")
def pg_server() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


@pytest.fixture
def pg_hub(pg_server: str, tmp_path: Path, tokens_for: Callable[[Any], dict[str, str]]) -> Iterator[Hub]:
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig
    from hub.server.core.db import make_engine
    from hub.server.core.models import Base

    engine = make_engine(pg_server)
    with engine.begin() as conn:  # a clean schema per test
        Base.metadata.drop_all(conn)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    config = HubConfig(data=tmp_path / "hub", db_url=pg_server, review_fast=True)
    tokens = tokens_for(config)
    with TestClient(create_app(config, auto_migrate=False)) as client:
        yield Hub(config, client, tokens)


def test_run_pages_on_postgres(pg_hub: Hub, tmp_path: Path) -> None:
    from sqlalchemy import delete, update

    from hub.server.core.models import Run, RunRollout
    from hub.server.results.rollout_store import backfill

    with pg_hub.sessions()() as session:
        _env(session, "alice", "toy", ["1.0.0"])
        session.commit()
    public = push(pg_hub, tmp_path, "alice", "model-hostile", public=True)
    private = push(pg_hub, tmp_path, "bob", "model-private", public=False, seed_=3)
    href = f"/runs/{public}"
    html = pg_hub.client.get(f"{href}?status=failed&sort=-reward&per_page=5&page=2").text
    assert len(_listed(html, href)) == 5 and "6–10 of" in html
    raw = pg_hub.client.get(f"{href}/rollouts/0.json")
    assert raw.status_code == 200 and raw.json()["task_id"].startswith("t")
    assert pg_hub.client.get(f"/runs/{private}").status_code == 404
    assert pg_hub.client.get(f"/runs/{private}", headers=pg_hub.auth("bob")).status_code == 200
    assert "model-private" not in pg_hub.client.get("/alice/toy/tasks/t1").text
    with pg_hub.sessions()() as session, session.begin():  # as if pushed before rollouts were stored
        run_id = session.scalars(select(Run.id).where(Run.public_id == public)).one()
        session.execute(delete(RunRollout).where(RunRollout.run_id == run_id))
        session.execute(update(Run).where(Run.id == run_id).values(rollouts_stored=False, config=""))
    assert "backfill-rollouts" in pg_hub.client.get(href).text
    done = backfill(pg_hub.sessions(), pg_hub.client.app.state.storage)
    assert [(d.public_id, d.rollouts) for d in done] == [(public, 32)]
    assert "1–32 of 32 rollouts" in pg_hub.client.get(href).text
    # labels: the filter on the shown label and the agreement line, in PostgreSQL's SQL
    for idx, value in ((0, "correct"), (0, "incorrect"), (1, "correct")):
        r = pg_hub.client.post(
            f"/api/v1/runs/{public}/rollouts/{idx}/labels",
            json={"value": value},
            headers=pg_hub.auth("alice"),
        )
        assert r.status_code == 201, r.text
    assert _listed(pg_hub.client.get(f"{href}?label=correct").text, href) == [1]
    assert _listed(pg_hub.client.get(f"{href}?label=any").text, href) == [0, 1]
    html = pg_hub.client.get(f"{href}?label=none&per_page=100").text
    assert len(_listed(html, href)) == 30 and "2 of 32 rollouts labelled" in html
