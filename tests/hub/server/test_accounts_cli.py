"""Accounts from the command line and the schema: ``verihub hub invite create`` prints a code
stored only hashed, ``verihub hub user password`` sets an argon2 hash from stdin, and migration
0006 gives existing users an empty password (no browser sign-in) and downgrades cleanly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from hub.server.accounts.passwords import check_password
from hub.server.accounts.users import add_user
from hub.server.admin import open_hub
from hub.server.core.config import HubConfig
from hub.server.core.models import Invitation, Owner


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


@pytest.fixture
def config(tmp_path: Path) -> HubConfig:
    cfg = HubConfig(data=tmp_path / "hub")
    with open_hub(cfg) as s:
        add_user(s, "alice")
    return cfg


def test_invite_create_prints_a_code_stored_hashed(
    config: HubConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(config.data)
    code, out, err = cli(
        capsys, "hub", "invite", "create", "--reviewer", "--expires-days", "2", "--data", data
    )
    assert code == 0 and "shown once" in err
    invitation = out.strip()
    assert invitation.startswith("vhi_")
    with open_hub(config) as s:
        row = s.scalars(select(Invitation)).one()
        assert row.reviewer and invitation not in row.code_hash and row.used_at is None
        assert 1.9 < (row.expires_at - row.created_at).total_seconds() / 86400 < 2.1
    code, _, err = cli(capsys, "hub", "invite", "create", "--expires-days", "0", "--data", data)
    assert code != 0 and "expires" in err


def test_user_password_from_stdin(
    config: HubConfig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("a long enough password\n"))
    code, out, _ = cli(capsys, "hub", "user", "password", "alice", "--data", str(config.data))
    assert code == 0 and "password of alice set" in out
    with open_hub(config) as s:
        stored = s.scalars(select(Owner.password_hash).where(Owner.name == "alice")).one()
        assert stored.startswith("$argon2id$") and "a long enough" not in stored
        assert check_password(s, "alice", "a long enough password") is not None
        assert check_password(s, "alice", "a long enough passworD") is None
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    code, _, err = cli(capsys, "hub", "user", "password", "alice", "--data", str(config.data))
    assert code != 0 and "at least" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("a long enough password\n"))
    code, _, err = cli(capsys, "hub", "user", "password", "nobody", "--data", str(config.data))
    assert code != 0 and "no user" in err


def test_migration_gives_existing_users_no_password_and_downgrades(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        old = "INSERT INTO owners (name, kind, is_admin, created_at) VALUES ('old', 'user', 0, '2026-01-01')"
        conn.execute(text(old))
    assert migrate(engine) >= "0006"
    with Session(engine) as s:
        assert s.execute(text("SELECT password_hash FROM owners WHERE name = 'old'")).scalar() == ""
        assert check_password(s, "old", "") is None
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
        tables = {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master"))}
        assert "web_sessions" not in tables and "invitations" not in tables
    engine.dispose()


def test_tokens_commands_against_a_served_hub(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from hub.server.accounts.users import create_token
    from hub.server.app import create_app

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from serving import serve_http

    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "config.toml"))  # no stored login
    monkeypatch.delenv("VERIHUB_HUB_TOKEN", raising=False)
    config = HubConfig(data=tmp_path / "hub")
    with open_hub(config) as s:
        add_user(s, "alice")
        add_user(s, "bob")
        alice = create_token(s, "alice", "push")
        bob = create_token(s, "bob", "push")
    with serve_http(create_app(config)) as url:

        def as_(tok: str, *args: str) -> tuple[int, str, str]:
            return cli(capsys, "tokens", *args, "--hub", url, "--token", tok)

        code, out, err = as_(alice, "create", "--scope", "read", "--expires-days", "3")
        assert code == 0 and "shown once" in err
        made = out.strip()
        assert made.startswith("vh_")
        code, out, _ = as_(alice, "list")
        assert code == 0 and made[:15] in out and made not in out and "active" in out
        code, _, err = as_(alice, "create", "--scope", "admin")
        assert code != 0 and "403" in err
        code, _, err = as_(bob, "revoke", made)
        assert code != 0 and "404" in err
        code, out, _ = as_(alice, "revoke", made)
        assert code == 0 and "revoked" in out
        code, out, _ = as_(alice, "list")
        assert "revoked" in out
        code, out, _ = as_(alice, "sign-out-everywhere")
        assert code == 0 and "0 session(s) ended" in out
