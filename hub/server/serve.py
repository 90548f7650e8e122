"""``verihub hub serve``: uvicorn for the application, plus one review worker process on SQLite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hub.env import UsageError
from hub.server.core import HubConfig, is_sqlite, make_engine, migrate

__all__ = ["build_own_wheel", "serve", "worker_command"]


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


#: what of the checkout goes into verihub's wheel (pyproject's packages, and what it reads)
_WHEEL_SOURCES = ("pyproject.toml", "README.md", "hub", "graders", "leaderboard", "verihub_v1")


def _source_tree() -> Path | None:
    """The checkout this verihub runs from (its ``pyproject.toml`` names verihub), or None when it
    runs from an installed wheel."""
    import hub

    root = Path(hub.__file__).resolve().parents[1]
    project = root / "pyproject.toml"
    if project.is_file() and 'name = "verihub"' in project.read_text(encoding="utf-8"):
        return root
    return None


def build_own_wheel(config: HubConfig) -> Path | None:
    """Build the wheel of the verihub this hub runs into ``config.own_wheel_dir`` (replacing what
    was there), so that ``/simple/verihub/`` serves the same code as the hub. Built offline, from a
    copy of the source tree, with the build backend already installed (setuptools, wheel: base
    dependencies). Returns the wheel, or None (with a line on stderr) when there is no source tree
    or the build fails: the index then offers no ``verihub``."""
    src = _source_tree()
    if src is None:
        sys.stderr.write("verihub hub: not serving verihub's own wheel (no source tree to build it from)\n")
        return None
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    out = config.own_wheel_dir
    with tempfile.TemporaryDirectory(prefix="own-wheel-") as tmp:
        tree = Path(tmp) / "src"
        tree.mkdir()
        for name in _WHEEL_SOURCES:
            if (src / name).is_dir():
                shutil.copytree(src / name, tree / name, ignore=skip)
            elif (src / name).is_file():
                shutil.copy2(src / name, tree / name)
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        proc = subprocess.run(
            [*cmd, "-q", "-w", str(Path(tmp) / "out"), str(Path(tmp) / "src")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        wheels = sorted((Path(tmp) / "out").glob("verihub-*.whl"))
        if proc.returncode != 0 or len(wheels) != 1:
            last = (proc.stderr.strip().splitlines() or ["no wheel"])[-1]
            sys.stderr.write(f"verihub hub: not serving verihub's own wheel (its build failed: {last})\n")
            return None
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        return Path(shutil.copy2(wheels[0], out / wheels[0].name))


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
    build_own_wheel(config)
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
