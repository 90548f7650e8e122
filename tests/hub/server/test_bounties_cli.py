"""``verihub hub bounty ...`` end to end: the real command line against a hub served over HTTP,
from creation to payout, with refusals printed as one line; and the reviewer role commands
(``hub user add --reviewer``, ``hub user role``) on the hub's database."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounty_kit import BountyHub, open_bounty_hub, serve_http  # noqa: E402


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[BountyHub, str]]:
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "config.toml"))  # no stored login
    monkeypatch.delenv("VERIHUB_HUB_TOKEN", raising=False)
    with open_bounty_hub(tmp_path) as h, serve_http(h.client.app) as url:
        yield h, url


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def test_bounty_commands_from_creation_to_payout(
    live: tuple[BountyHub, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    h, url = live

    def as_(who: str, *args: str) -> tuple[int, str, str]:
        return cli(capsys, "hub", "bounty", *args, "--hub", url, "--token", h.tokens[who])

    spec = tmp_path / "spec.md"
    spec.write_text("# SQL grader\n\nGrade `SELECT` answers by executing them.\n", encoding="utf-8")
    code, out, _ = as_("rita", "create", "--title", "SQL grader", "--reward", "500 EUR",
                       "--deadline", "2099-01-31", "--spec-file", str(spec), "--claim-days", "3")  # fmt: skip
    assert code == 0 and "bounty #1 created: SQL grader (/bounties/1)" in out
    code, _, err = as_(
        "alice", "create", "--title", "x", "--reward", "1", "--deadline", "2099-01-01", "--spec", "s"
    )
    assert code == 1 and err.startswith("error: the hub answered 403: only a reviewer may create")
    assert err.count("\n") == 1
    code, out, _ = as_("bob", "list", "--state", "open")
    assert code == 0 and "#1 [open] SQL grader (reward 500 EUR, due 2099-01-31 23:59 UTC)" in out
    code, out, _ = as_("alice", "claim", "1")
    assert code == 0 and "bounty #1 is claimed now" in out and "the claim expires" in out
    code, _, err = as_("bob", "claim", "1")
    assert code == 1 and "409: bounty 1 is claimed by alice until" in err and err.count("\n") == 1
    h.version("alice/arith@0.1.0", "passed")
    code, out, _ = as_("alice", "submit", "1", "alice/arith@0.1.0")
    assert code == 0 and "bounty #1 is review_passed now" in out
    assert as_("rita", "review", "1")[0] == 0
    code, _, err = as_("alice", "accept", "1", "--note", "I like it")
    assert code == 1 and "403" in err
    assert as_("rita", "accept", "1", "--note", "does what the spec says")[0] == 0
    assert as_("rita", "payout", "1", "--reference", "SEPA 42")[0] == 0
    code, out, _ = as_("bob", "show", "1")
    assert code == 0 and "submission: alice/arith@0.1.0 (automatic review: passed)" in out
    assert "payout: 500 EUR to alice (SEPA 42), recorded by rita" in out
    assert "the hub review_passed (submitted -> review_passed)" in out
    assert "rita accept (under_review -> accepted): does what the spec says" in out
    code, _, err = cli(capsys, "hub", "bounty", "claim", "1", "--hub", url)
    assert code == 1 and "needs a token" in err


def test_reviewer_role_commands(live: tuple[BountyHub, str], capsys: pytest.CaptureFixture[str]) -> None:
    from hub.server.core.models import Owner

    h, _ = live
    data = str(h.config.data)
    assert cli(capsys, "hub", "user", "add", "rev", "--reviewer", "--data", data)[0] == 0
    code, out, _ = cli(capsys, "hub", "user", "role", "bob", "--reviewer", "--data", data)
    assert code == 0 and "bob is now a reviewer" in out
    assert cli(capsys, "hub", "user", "role", "alice", "--no-reviewer", "--data", data)[0] == 0
    code, _, err = cli(capsys, "hub", "user", "role", "nobody", "--reviewer", "--data", data)
    assert code == 1 and "no user 'nobody'" in err
    with h.client.app.state.sessions() as s:
        roles = {o.name: o.is_reviewer for o in s.scalars(select(Owner))}
    assert roles["rev"] and roles["bob"] and roles["rita"] and not roles["alice"] and not roles["vic"]
    assert h.create("bob").status_code == 403  # a reviewer now, but bob's token is a push token
