"""The hub's own secrets never reach a review child nor leave through a report.

A hostile review child (standing in for package code that prints its environment in a repr)
dumps its environment, its command line and its parent's, then either writes them as its report
or crashes with them on stderr. Nothing of the database URL's password may appear in what the
child was given, in the stored report, in the API or on the environment's page.
"""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hub.server.pg_cluster import pg_bin, postgres_cluster

PASSWORD = "pw-S3cr3t-9f2c1e"
SQLITE_SECRET_URL = f"postgresql://hub:{PASSWORD}@db.internal:5432/hub"

_HOSTILE = """#!{python}
import json, os, sys
out = next(a for a in sys.argv if a.endswith(("report.json", "outcome.json")))
def read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace").replace("\\0", " ")
    except OSError as exc:
        return str(exc)
seen = {{
    "environ": dict(os.environ),
    "cmdline": read("/proc/self/cmdline"),
    "parent_environ": read(f"/proc/{{os.getppid()}}/environ"),
    "parent_cmdline": read(f"/proc/{{os.getppid()}}/cmdline"),
}}
with open({side!r}, "w") as fh:
    json.dump({{"environ": seen["environ"], "cmdline": seen["cmdline"]}}, fh)
text = json.dumps(seen)
if {crash!r}:
    sys.stderr.write(text + "\\n")
    sys.exit(3)
with open(out, "w") as fh:
    json.dump({{"passed": False, "problems": [text], "check_text": repr(seen)}}, fh)
"""


def _hostile_child(tmp: Path, monkeypatch: pytest.MonkeyPatch, *, crash: bool) -> Path:
    """Make the worker run the hostile script in place of the review child; returns the file
    where the script records what it was given."""
    import hub.server.worker as worker

    side = tmp / "child-saw.json"
    script = tmp / "hostile-child"
    script.write_text(_HOSTILE.format(python=sys.executable, side=str(side), crash=crash), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(worker, "sys", types.SimpleNamespace(executable=str(script)))
    return side


def _queue_version(config: Any) -> None:
    """One public environment with a queued version and its job (the bundle is a stand-in)."""
    from hub.server.admin import open_hub
    from hub.server.core.models import EnvFile, Environment, Job, Owner, Version
    from hub.server.core.storage import LocalStorage

    bundle = LocalStorage(config.data).put_bytes(b"not a bundle: the hostile child ignores it")
    with open_hub(config) as s:
        owner = Owner(name="mallory", kind="user")
        env = Environment(owner=owner, env_id="leaky", distribution="leaky", project="leaky")
        ver = Version(environment=env, version="0.1.0", manifest_sha256="0" * 64, content_hash="0" * 64)
        s.add_all([owner, env, ver])
        s.add(EnvFile(version=ver, kind="bundle", filename="leaky.tar.gz", sha256=bundle, size=1))
        s.add(Job(version=ver, worker=""))
        s.commit()


def _everything_shown(config: Any) -> str:
    """The stored report, the version API and the environment page, as one text."""
    from starlette.testclient import TestClient

    from hub.server.admin import open_hub
    from hub.server.app import create_app
    from hub.server.core.models import Version

    with open_hub(config) as s:
        stored = "".join(v.report for v in s.query(Version).all())
    with TestClient(create_app(config)) as client:
        api = client.get("/api/v1/envs/mallory/leaky/0.1.0")
        page = client.get("/mallory/leaky")
    assert api.status_code == 200 and page.status_code == 200
    assert api.json()["report"]["problems"], "the report was not stored"
    return stored + api.text + page.text


def _review_and_check(config: Any, side: Path, secrets: list[str]) -> None:
    from hub.server.worker import work

    _queue_version(config)
    assert work(config, once=True) == 1
    saw = json.loads(side.read_text(encoding="utf-8"))
    assert not any(k.startswith("VERIHUB_HUB") for k in saw["environ"]), saw["environ"].keys()
    given = json.dumps(saw)
    shown = _everything_shown(config)
    for secret in secrets:
        assert secret not in given, "the review child was given a hub secret"
        assert secret not in shown, "a hub secret left through the review report"


@pytest.mark.parametrize("crash", [False, True], ids=["report", "stderr"])
def test_review_child_gets_and_shows_no_hub_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: bool
) -> None:
    """SQLite hub; the worker's environment holds a database URL as ``hub serve`` puts it there."""
    from hub.server.core.config import HubConfig

    monkeypatch.setenv("VERIHUB_HUB_DB", SQLITE_SECRET_URL)
    side = _hostile_child(tmp_path, monkeypatch, crash=crash)
    config = HubConfig(data=tmp_path / "hub", lease_s=30.0)
    _review_and_check(config, side, [PASSWORD])


@pytest.mark.parametrize("crash", [False, True], ids=["report", "stderr"])
def test_a_leaked_secret_is_still_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: bool
) -> None:
    """Were the child given the URL after all (a wider allow-list), reports still hide it."""
    import hub.server.worker as worker
    from hub.server.core.config import HubConfig
    from hub.server.worker import work

    monkeypatch.setenv("VERIHUB_HUB_DB", SQLITE_SECRET_URL)
    monkeypatch.setattr(worker, "CHILD_ENV", (*worker.CHILD_ENV, "VERIHUB_HUB_DB"))
    side = _hostile_child(tmp_path, monkeypatch, crash=crash)
    config = HubConfig(data=tmp_path / "hub", lease_s=30.0)
    _queue_version(config)
    assert work(config, once=True) == 1
    assert PASSWORD in side.read_text(encoding="utf-8")  # the child did see it
    assert PASSWORD not in _everything_shown(config)


def test_worker_command_line_carries_no_database_url(tmp_path: Path) -> None:
    from hub.server.core.config import HubConfig
    from hub.server.serve import worker_command

    cmd = worker_command(HubConfig(data=tmp_path, db_url=SQLITE_SECRET_URL))
    assert not any(PASSWORD in part for part in cmd)


@pytest.mark.slow
def test_redactor_cleans_what_package_code_prints() -> None:
    from hub.server.core.redact import MAX_TEXT, REDACTED, Redactor, hub_secrets

    r = Redactor.of(hub_secrets("postgresql://u:p%40ss-word-1@h/db", "/srv/hub-data"))
    dirty = {
        "a": "url postgresql://u:p%40ss-word-1@h/db and p@ss-word-1 in /srv/hub-data/blobs",
        "b": ["token vh_0123456789ab_" + "A" * 43, "hf_" + "x" * 30, "api_key=abcdef", "\x1b[31mred"],
        "c": "z" * (MAX_TEXT + 50),
    }
    clean = json.dumps(r.value(dirty))
    for gone in ("p%40ss", "p@ss-word-1", "/srv/hub-data", "AAAAAAAAAA", "x" * 30, "abcdef", "\\u001b"):
        assert gone not in clean
    assert REDACTED in clean and "characters cut" in clean


_HAVE_PG = pg_bin() is not None and importlib.util.find_spec("psycopg") is not None


@pytest.fixture(scope="module")
def pg_secret_url() -> Iterator[str]:
    if not _HAVE_PG:
        pytest.skip("needs PostgreSQL and psycopg")
    with postgres_cluster() as url:  # trust authentication: the password is carried, not checked
        yield url.replace("postgresql://", "postgresql+psycopg://").replace("@/", f":{PASSWORD}@/", 1)


@pytest.mark.postgres
@pytest.mark.slow
def test_postgres_hub_review_child_gets_and_shows_no_database_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_secret_url: str
) -> None:
    from hub.server.core.config import HubConfig
    from hub.server.core.db import make_engine, migrate

    config = HubConfig(data=tmp_path / "hub", db_url=pg_secret_url, lease_s=30.0)
    engine = make_engine(config.database)
    migrate(engine)
    engine.dispose()
    for key, value in config.to_env().items():  # as ``hub serve`` starts its worker
        monkeypatch.setenv(key, value)
    side = _hostile_child(tmp_path, monkeypatch, crash=False)
    _review_and_check(config, side, [PASSWORD, pg_secret_url])
