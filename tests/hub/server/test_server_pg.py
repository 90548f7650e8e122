"""The hub on a real PostgreSQL (a throwaway cluster on a unix socket): the Alembic migration,
publish and review through the API, ``SKIP LOCKED`` job claims by concurrent workers, and two
concurrent pushes of one version."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_cluster import pg_bin, postgres_cluster  # noqa: E402

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        pg_bin() is None or importlib.util.find_spec("psycopg") is None,
        reason="needs PostgreSQL (apt-get install postgresql) and psycopg (pip install 'verihub[hub]')",
    ),
]


@pytest.fixture(scope="module")
def pg_server() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> str:
    from hub.server.core.db import make_engine
    from hub.server.core.models import Base

    engine = make_engine(pg_server)
    with engine.begin() as conn:  # a clean schema per test
        Base.metadata.drop_all(conn)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    return pg_server


def test_migration_and_skip_locked_claims(pg_url: str, tmp_path: Path) -> None:
    from hub.server.core.config import HubConfig
    from hub.server.core.db import make_engine, migrate, sessions
    from hub.server.core.models import EnvFile, Environment, Job, Owner, Version
    from hub.server.reviews.jobs import claim

    engine = make_engine(pg_url)
    migrate(engine)
    migrate(engine)  # idempotent
    assert engine.dialect.name == "postgresql"
    make = sessions(engine)
    with make() as s, s.begin():
        owner = Owner(name="o", kind="user", is_admin=False)
        env = Environment(
            owner=owner,
            env_id="e",
            distribution="e",
            project="e",
            private=False,
            flagged="",
            summary="",
            tags="",
            license="",
        )
        for i in range(6):
            v = Version(
                environment=env,
                version=f"0.{i}",
                manifest_sha256="m",
                content_hash="c",
                requires_python="",
                readme="",
                report="",
                yank_reason="",
            )
            s.add(
                EnvFile(
                    version=v, kind="bundle", filename="b", sha256=f"{i:064x}", size=1, metadata_sha256=""
                )
            )
            s.add(Job(version=v, worker=""))
    got: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(3)

    def worker(name: str) -> None:
        barrier.wait()
        while (c := claim(make, name, 60.0)) is not None:
            with lock:
                got.append(c.job_id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == sorted(set(got)) and len(got) == 6  # every job claimed exactly once
    assert HubConfig(data=tmp_path, db_url=pg_url).database == pg_url
    engine.dispose()


def test_publish_review_and_conflicts_on_postgres(
    pg_url: str,
    tmp_path: Path,
    arith_bundle: Any,
    variant: Callable[..., Path],
    tokens_for: Callable[[Any], dict[str, str]],
) -> None:
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig
    from hub.server.worker import work

    config = HubConfig(data=tmp_path / "hub", db_url=pg_url, review_fast=True)
    tokens = tokens_for(config)
    with TestClient(create_app(config, auto_migrate=False)) as client:
        auth = {"Authorization": f"Bearer {tokens['alice']}"}
        a, b = variant(arith_bundle, summary="First"), variant(arith_bundle, summary="Second")
        codes: list[int] = []
        barrier = threading.Barrier(2)

        def push(archive: Path) -> None:
            barrier.wait()
            codes.append(client.post("/api/v1/push", content=archive.read_bytes(), headers=auth).status_code)

        threads = [threading.Thread(target=push, args=(x,)) for x in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [201, 409]
        assert work(config, once=True) == 1
        info = client.get("/api/v1/envs/alice/arith").json()
        assert info["versions"][0]["state"] == "passed" and info["offered"] == ["0.1.0"]
        page = client.get("/simple/verihub-arith/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        assert page.json()["versions"] == ["0.1.0"]
