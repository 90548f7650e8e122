"""Accounts on a real PostgreSQL (a throwaway cluster on a unix socket): migration 0006 on an
existing owner, sign-up, sign-in and sign-out through the pages, and one invitation redeemed by
eight threads at once, of which exactly one gets the account."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import BASE, PASSWORD, csrf, sign_in, sign_up  # noqa: E402
from pg_cluster import pg_bin, postgres_cluster  # noqa: E402

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.skipif(
        pg_bin() is None or importlib.util.find_spec("psycopg") is None,
        reason="needs PostgreSQL (apt-get install postgresql) and psycopg (pip install 'verihub[hub]')",
    ),
]


def test_accounts_on_postgres(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from starlette.testclient import TestClient

    from hub.server.accounts.invitations import create_invitation
    from hub.server.accounts.selfservice import sign_up as sign_up_service
    from hub.server.app import create_app
    from hub.server.core.config import HubConfig
    from hub.server.core.db import _MIGRATIONS, make_engine, migrate, sessions
    from hub.server.core.problems import HubProblem

    with postgres_cluster() as url:
        engine = make_engine(url)
        cfg = Config()
        cfg.set_main_option("script_location", str(_MIGRATIONS))
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0005")
            old = "INSERT INTO owners (name, kind, is_admin, created_at) VALUES ('old', 'user', false, now())"
            conn.execute(text(old))
        assert migrate(engine) >= "0006"
        make = sessions(engine)
        with make() as s:
            assert s.execute(text("SELECT password_hash FROM owners WHERE name = 'old'")).scalar() == ""
        with make() as s, s.begin():
            code = create_invitation(s)
        wins: list[str] = []
        losses: list[str] = []

        def race(i: int) -> None:
            try:
                with make() as s, s.begin():
                    sign_up_service(s, f"racer{i}", PASSWORD, invitation=code, open_registration=False)
                wins.append(f"racer{i}")
            except HubProblem as exc:
                losses.append(str(exc))

        threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(wins) == 1 and len(losses) == 7, (wins, losses)
        with make() as s:
            names = set(s.execute(text("SELECT name FROM owners")).scalars())
        assert names == {"old", wins[0]}  # the losers' users were rolled back
        engine.dispose()

        app = create_app(HubConfig(data=tmp_path / "hub", db_url=url), auto_migrate=False)
        with TestClient(app, base_url=BASE, follow_redirects=False) as client:
            with app.state.sessions() as s, s.begin():
                invite = create_invitation(s)
            assert sign_up(client, "pat", invitation=invite).status_code == 303
            assert "signed in as" in client.get("/settings").text
            r = client.post("/sign-out", data={"csrf_token": csrf(client, "/settings")})
            assert r.status_code == 303 and client.get("/settings").status_code == 303
            assert sign_in(client, "pat", "not the password").status_code == 401
            assert sign_in(client, "pat").status_code == 303
