"""Database engines and migrations: SQLite by default, PostgreSQL (psycopg 3) at scale.

``sqlite:///DIR/hub.db`` gets WAL mode, a busy timeout and foreign keys; a
``postgresql://`` URL is rewritten to the psycopg 3 driver. :func:`migrate` applies the
Alembic revisions in ``hub/server/core/migrations`` (idempotent; ``verihub hub migrate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.orm import Session, sessionmaker

from hub.env import UsageError

__all__ = ["current_revision", "default_db_url", "is_sqlite", "make_engine", "migrate", "sessions"]

_MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def default_db_url(data: Path) -> str:
    """The embedded database under the data folder."""
    return f"sqlite:///{(data / 'hub.db').resolve()}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (``sqlite:///PATH`` or ``postgresql://...``)."""
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    if is_sqlite(url):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql+psycopg://"):
        return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
    raise UsageError(f"--db {url!r}: use sqlite:///PATH or postgresql://USER@HOST/DB")


def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def current_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at; None for a database without the hub's schema."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def migrate(engine: Engine) -> str:
    """Apply every Alembic revision not yet applied; returns the head revision."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    with engine.connect() as conn:
        tables = set(inspect(conn).get_table_names())
    if "versions" not in tables:  # pragma: no cover - alembic said it was done
        raise UsageError("the hub migrations did not create the schema; check the --db URL")
    return str(ScriptDirectory.from_config(cfg).get_current_head())
