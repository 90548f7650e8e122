"""Bounties on a real PostgreSQL (a throwaway cluster on a unix socket): migration 0003 on an
existing owner, and eight threads claiming one bounty at once, of which exactly one wins."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
import threading
from pathlib import Path

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


def test_migration_and_racing_claims_on_postgres() -> None:
    from alembic import command
    from alembic.config import Config

    from hub.server.accounts.users import Principal, add_user
    from hub.server.bounties.workflow import BountyError, act, create_bounty
    from hub.server.core.db import _MIGRATIONS, make_engine, migrate, sessions
    from hub.server.core.models import utcnow

    with postgres_cluster() as url:
        engine = make_engine(url)
        cfg = Config()
        cfg.set_main_option("script_location", str(_MIGRATIONS))
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0002")
            old = "INSERT INTO owners (name, kind, is_admin, created_at) VALUES ('old', 'user', false, now())"
            conn.execute(text(old))
        assert migrate(engine) >= "0003"  # upgraded from 0002 through the bounties revision
        make = sessions(engine)
        with make() as s:
            assert s.execute(text("SELECT is_reviewer FROM owners WHERE name = 'old'")).scalar() is False
            rita = add_user(s, "rita", reviewer=True)
            users = [add_user(s, f"u{i}") for i in range(8)]
            reviewer = Principal(user_id=rita.id, name="rita", scope="review", is_admin=False)
            deadline = utcnow() + dt.timedelta(days=3)
            bid = create_bounty(s, reviewer, title="t", spec="s", reward="r", deadline=deadline).id
            s.commit()
        won: list[str] = []
        lost: list[str] = []
        start = threading.Barrier(len(users))

        def claim(name: str, user_id: int) -> None:
            with make() as s:
                start.wait()
                try:
                    act(s, Principal(user_id=user_id, name=name, scope="push", is_admin=False), bid, "claim")
                    s.commit()
                    won.append(name)
                except BountyError as exc:
                    s.rollback()
                    lost.append(exc.problem.value)

        threads = [threading.Thread(target=claim, args=(u.name, u.id)) for u in users]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(won) == 1 and lost == ["conflict"] * 7
        with make() as s:
            rows = s.execute(text("SELECT action FROM bounty_events WHERE bounty_id = :b"), {"b": bid}).all()
        assert [r[0] for r in rows] == ["create", "claim"]
        engine.dispose()
