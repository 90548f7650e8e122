"""``verihub hub serve``: uvicorn for the application, plus one review worker process on SQLite."""

from __future__ import annotations

import os
import subprocess
import sys

from hub.env.errors import UsageError
from hub.server.core.config import HubConfig
from hub.server.core.db import is_sqlite, make_engine, migrate

__all__ = ["serve", "worker_command"]


def worker_command(config: HubConfig, *, parent_pid: int | None = None) -> list[str]:
    """The review worker's command line. The database URL (it may hold a password) is not on
    it, where any local user could read it: the worker reads ``VERIHUB_HUB_DB`` from its
    environment (:meth:`HubConfig.to_env`), and passes none of it on to the children that run
    package code (:func:`hub.server.worker.child_env`)."""
    cmd = [
        sys.executable,
        "-m",
        "hub",
        "hub",
        "worker",
        "--data",
        str(config.data),
        "--lease-s",
        str(config.lease_s),
        "--reverify-share",
        str(config.reverify_share),
    ]
    if config.review_fast:
        cmd.append("--review-fast")
    if parent_pid is not None:
        cmd += ["--parent-pid", str(parent_pid)]
    return cmd


def serve(
    config: HubConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    review_worker: bool | None = None,
    forwarded_allow_ips: str = "",
) -> None:
    """Serve until interrupted. The embedded SQLite database is migrated first; a PostgreSQL
    database must have been migrated with ``verihub hub migrate``. ``review_worker`` defaults to
    True on SQLite (run separate ``verihub hub worker`` processes with PostgreSQL).

    Client addresses (what the failed-auth limiter counts) are the socket's peer unless
    ``forwarded_allow_ips`` names the proxies (comma-separated addresses) whose
    ``X-Forwarded-For`` is believed; uvicorn's own default would believe any loopback peer."""
    import uvicorn

    config.data.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database)
    sqlite = is_sqlite(config.database)
    if sqlite:
        migrate(engine)
    else:
        from sqlalchemy import inspect

        with engine.connect() as conn:
            ready = "alembic_version" in inspect(conn).get_table_names()
        if not ready:
            engine.dispose()
            raise UsageError("the database has no hub schema yet: run `verihub hub migrate --db URL` first")
    engine.dispose()
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    os.environ.update(config.to_env())
    child = None
    if review_worker if review_worker is not None else sqlite:
        child = subprocess.Popen(worker_command(config, parent_pid=os.getpid()))
    try:
        uvicorn.run(
            "hub.server.app:env_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
            access_log=False,
            proxy_headers=bool(forwarded_allow_ips),
            forwarded_allow_ips=forwarded_allow_ips or "",
        )
    finally:
        if child is not None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
