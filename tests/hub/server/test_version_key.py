"""Versions of an environment are unique as PEP 440 versions, in the database itself: two pushes
of ``0.1`` and ``0.1.0`` that race past publish's own check cannot both land (SQLite and
PostgreSQL), existing rows are keyed by the migration, and publish turns the refusal into the
same answer as its check."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hub.server.core.models import Environment, Owner, Version, version_key

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg_cluster import pg_bin, postgres_cluster  # noqa: E402


def test_the_key_is_the_pep440_canonical_form() -> None:
    assert version_key("0.1") == version_key("0.1.0") == version_key("0.1.0.0") == "0.1"
    assert version_key("1.0.0.post0") == version_key("1.post0")
    assert version_key("0!2.0") == version_key("2")
    assert version_key("0.1.1") != version_key("0.1")
    assert version_key("1.0+local") != version_key("1.0")  # PEP 440: a local version is another one


def _env(engine: Engine) -> int:
    with Session(engine) as s, s.begin():
        env = Environment(
            owner=Owner(name="alice", kind="user", is_admin=False),
            env_id="arith",
            distribution="verihub-arith",
            project="verihub-arith",
            private=False,
        )
        s.add(env)
        s.flush()
        return int(env.id)


def _race(engine: Engine, env_id: int, spellings: tuple[str, ...]) -> list[BaseException | None]:
    """Each spelling inserted by its own thread and session, all writes started together."""
    start = threading.Barrier(len(spellings), timeout=30)
    outcome: list[BaseException | None] = [None] * len(spellings)

    def push(i: int) -> None:
        try:
            with Session(engine) as s, s.begin():
                start.wait()
                s.add(
                    Version(
                        environment_id=env_id, version=spellings[i], manifest_sha256=f"m{i}", content_hash="c"
                    )
                )
        except BaseException as exc:  # noqa: BLE001 (recorded for the test)
            outcome[i] = exc

    threads = [threading.Thread(target=push, args=(i,)) for i in range(len(spellings))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return outcome


def _check_one_landed(engine: Engine, env_id: int, outcome: list[BaseException | None]) -> None:
    assert sum(o is None for o in outcome) == 1, outcome
    assert all(isinstance(o, IntegrityError) for o in outcome if o is not None), outcome
    with Session(engine) as s:
        keys = s.scalars(select(Version.version_key).where(Version.environment_id == env_id)).all()
    assert keys == ["0.1"]


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Engine:
    from hub.server.core.db import make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'hub.db'}")
    migrate(engine)
    return engine


def test_racing_spellings_of_one_version_land_once_on_sqlite(sqlite_engine: Engine) -> None:
    env_id = _env(sqlite_engine)
    outcome = _race(sqlite_engine, env_id, ("0.1", "0.1.0", "0.1.0.0"))
    _check_one_landed(sqlite_engine, env_id, outcome)


@pytest.fixture(scope="module")
def pg_engine() -> Iterator[Engine]:
    if pg_bin() is None or importlib.util.find_spec("psycopg") is None:
        pytest.skip("needs PostgreSQL (apt-get install postgresql) and psycopg (pip install 'verihub[hub]')")
    from hub.server.core.db import make_engine, migrate

    with postgres_cluster() as url:
        engine = make_engine(url)
        migrate(engine)
        yield engine
        engine.dispose()


@pytest.mark.postgres
def test_racing_spellings_of_one_version_land_once_on_postgresql(pg_engine: Engine) -> None:
    env_id = _env(pg_engine)
    outcome = _race(pg_engine, env_id, ("0.1", "0.1.0", "0.1.0.0"))
    _check_one_landed(pg_engine, env_id, outcome)


def test_the_migration_keys_existing_versions(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        conn.execute(
            text(
                "INSERT INTO owners (id, name, kind, is_admin, created_at) "
                "VALUES (1, 'o', 'user', 0, '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO environments (id, owner_id, env_id, distribution, project, private, flagged, "
                "summary, tags, license, created_at) "
                "VALUES (1, 1, 'e', 'e', 'e', 0, '', '', '', '', '2026-01-01')"
            )
        )
        for i, spelled in enumerate(("0.1", "0.2.0", "0.1.0"), start=1):  # an older hub let 0.1.0 in
            conn.execute(
                text(
                    "INSERT INTO versions (id, environment_id, version, manifest_sha256, content_hash, "
                    "requires_python, readme, state, report, yanked, yank_reason, uploaded_at) "
                    f"VALUES ({i}, 1, '{spelled}', 'm', 'c', '', '', 'passed', '', 0, '', '2026-01-01')"
                )
            )
    migrate(engine)
    with Session(engine) as s:
        keys: dict[str, str] = dict(s.execute(text("SELECT version, version_key FROM versions")).all())
    assert keys == {"0.1": "0.1", "0.2.0": "0.2", "0.1.0": "0.1~3"}
    with Session(engine) as s:  # the same revision adds the bounties' rendered specification
        assert s.execute(text("SELECT count(spec_html) FROM bounties")).scalar() == 0
    with pytest.raises(IntegrityError), Session(engine) as s, s.begin():
        s.add(Version(environment_id=1, version="0.2.0.0", manifest_sha256="x", content_hash="c"))


@pytest.mark.slow
def test_publish_refuses_a_version_that_raced_past_its_check(
    hub: Any,
    arith_bundle: Any,
    packed: Callable[[Path], Path],
    variant: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import hub.server.packages.publish as publish_mod

    # each push's own check runs as if before the other push committed (it sees nothing), so
    # only the database can refuse; the check after the refusal sees what is there
    real, blind = publish_mod._existing, [False]

    def check(*args: Any) -> str:
        if blind[0]:
            blind[0] = False
            return ""
        return str(real(*args))

    def racing_push(archive: Path) -> Any:
        blind[0] = True
        return hub.push(archive)

    monkeypatch.setattr(publish_mod, "_existing", check)
    first = packed(arith_bundle.bundle)
    assert racing_push(first).status_code == 201
    again = racing_push(first)  # the same content raced in twice: "already published"
    assert again.status_code == 200 and again.json()["created"] is False, again.text
    r = racing_push(variant(arith_bundle, version="0.1.0.0", summary="Other code, same version"))
    assert r.status_code == 409 and "already exists with different content" in r.text, r.text
    with hub.sessions()() as s:
        assert s.scalars(select(Version.version)).all() == ["0.1.0"]
