"""Bounties through the API (Starlette's test client, SQLite): every transition of the state
machine, every permission refusal with its status, claims (double, expired, past the deadline),
the hub's automatic moves, private versions kept hidden, and the history of who did what when.

Environment versions are written straight into the database (bounty_kit): a bounty links a
version and reads its review state; pushing real bundles is tested elsewhere.
"""

from __future__ import annotations

import base64
import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from hub.server.core.models import utcnow

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounty_kit import BountyHub, open_bounty_hub  # noqa: E402

REF = "alice/arith@0.1.0"


@pytest.fixture
def bounty_hub(tmp_path: Path) -> Iterator[BountyHub]:
    with open_bounty_hub(tmp_path) as h:
        yield h


def _at(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.rstrip("Z"))


def claimed(h: BountyHub, claimant: str = "alice", **fields: Any) -> int:
    r = h.create(**fields)
    assert r.status_code == 201, r.text
    bid = int(r.json()["id"])
    assert h.act(claimant, bid, "claim").status_code == 200
    return bid


def test_happy_path_records_every_move_with_who_and_when(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    before = utcnow().replace(microsecond=0)
    bid = claimed(h)
    h.version(REF)  # queued: the hub has not reviewed it yet
    r = h.act("alice", bid, "submit", ref=REF)
    assert r.status_code == 200 and r.json()["state"] == "submitted", r.text
    assert h.act("rita", bid, "review").status_code == 409  # the automatic review comes first
    h.review_done(REF, "passed")
    b = h.get(bid)
    assert b["state"] == "review_passed" and b["submission"]["review_state"] == "passed"
    assert h.act("rita", bid, "review").json()["state"] == "under_review"
    assert h.act("rita", bid, "accept", note="clean grader, good tests").json()["state"] == "accepted"
    r = h.act("rita", bid, "payout", reference="SEPA 2026-118")
    pay = r.json()["payout"]
    assert pay["amount"] == "500 EUR" and pay["recipient"] == "alice" and pay["recorded_by"] == "rita"
    assert pay["reference"] == "SEPA 2026-118" and pay["recorded_at"]
    events = h.get(bid)["events"]
    moves = [(e["actor"], e["action"], e["from"], e["to"]) for e in events]
    assert moves == [
        ("rita", "create", None, "open"),
        ("alice", "claim", "open", "claimed"),
        ("alice", "submit", "claimed", "submitted"),
        (None, "review_passed", "submitted", "review_passed"),
        ("rita", "review", "review_passed", "under_review"),
        ("rita", "accept", "under_review", "accepted"),
        ("rita", "payout", "accepted", "accepted"),
    ]
    times = [_at(e["at"]) for e in events]
    assert times == sorted(times) and times[0] >= before and times[-1] <= utcnow() + dt.timedelta(seconds=1)
    assert events[5]["note"] == "clean grader, good tests" and events[2]["version"]["ref"] == REF
    assert h.act("rita", bid, "payout", reference="again").status_code == 409


def test_create_needs_a_reviewer_with_a_review_token(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    assert h.create("alice").status_code == 403  # push token, not a reviewer
    assert h.create("vic").status_code == 403  # review token, not a reviewer
    assert h.create("rita_push").status_code == 403  # a reviewer, but a push token
    assert h.create(None).status_code == 401
    assert h.create("root").status_code == 201  # an admin
    assert h.create("rita", title="  ").status_code == 400
    assert h.create("rita", deadline="2001-01-01").status_code == 400
    assert h.create("rita", deadline="next week").status_code == 400
    assert h.create("rita", claim_days="0").status_code == 400
    assert [b["id"] for b in h.client.get("/api/v1/bounties").json()] == [1]


def test_refusals_of_each_move(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = int(h.create().json()["id"])
    assert h.act("alice_read", bid, "claim").status_code == 403
    assert h.act("alice", bid, "submit", ref=REF).status_code == 409  # not claimed
    assert h.act("rita", bid, "accept", note="x").status_code == 409
    assert h.act("alice", bid, "fly").status_code == 404
    assert h.act("alice", 99, "claim").status_code == 404
    assert h.act("alice", bid, "claim").status_code == 200
    r = h.act("bob", bid, "claim")
    assert r.status_code == 409 and "claimed by alice until" in r.json()["error"]
    assert h.act("bob", bid, "unclaim").status_code == 403
    h.version("bob/quiz@1.0", "passed")
    h.version("alice/arith@0.1.0", "passed")
    assert h.act("bob", bid, "submit", ref="bob/quiz@1.0").status_code == 403  # not the claimant
    assert h.act("alice", bid, "submit", ref="bob/quiz@1.0").status_code == 403  # not alice's
    assert h.act("alice", bid, "submit", ref="alice/arith").status_code == 400  # no version
    assert h.act("alice", bid, "submit", ref="alice/arith@9.9").status_code == 400
    assert h.act("alice", bid, "submit", ref="not a ref").status_code == 400
    assert h.act("alice", bid, "submit", ref=REF).json()["state"] == "review_passed"
    assert h.act("vic", bid, "review").status_code == 403  # review token, not a reviewer
    assert h.act("rita_push", bid, "review").status_code == 403  # reviewer, push token
    assert h.act("alice", bid, "review").status_code == 403
    assert h.act("rita", bid, "review").status_code == 200
    assert h.act("rita", bid, "accept").status_code == 400  # a note is required
    assert h.act("rita", bid, "reject", note="  ").status_code == 400
    assert h.act("bob", bid, "accept", note="mine now").status_code == 403
    bad = h.client.post(f"/api/v1/bounties/{bid}/reject", content=b"{not json", headers=h.auth("rita"))
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]
    basic = {"Authorization": "Basic " + base64.b64encode(f"x:{h.tokens['rita']}".encode()).decode()}
    assert h.client.post(f"/api/v1/bounties/{bid}/reject", headers=basic).status_code == 401
    r = h.client.post(  # fields as query parameters work too
        f"/api/v1/bounties/{bid}/reject",
        params={"note": "misses the spec's edge cases"},
        headers=h.auth("rita"),
    )
    b = r.json()
    assert b["state"] == "rejected" and b["decision"]["by"] == "rita"
    assert b["decision"]["note"] == "misses the spec's edge cases"
    assert h.get(bid)["state"] == "rejected"


def test_a_claimant_who_is_a_reviewer_cannot_review_or_accept_their_own(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = claimed(h, "carol")
    h.version("carol/sqlgrade@1.0", "passed")
    assert h.act("carol", bid, "submit", ref="carol/sqlgrade@1.0").json()["state"] == "review_passed"
    r = h.act("carol_review", bid, "review")
    assert r.status_code == 403 and "you claimed this bounty" in r.json()["error"]
    assert h.act("root", bid, "review").status_code == 200  # an admin who did not claim it
    for action in ("accept", "reject"):
        assert h.act("carol_review", bid, action, note="looks great").status_code == 403
    assert h.act("rita", bid, "accept", note="ok").status_code == 200
    assert h.act("carol_review", bid, "payout", reference="self").status_code == 403
    assert h.get(bid)["payout"] is None


def test_unclaim_by_the_claimant_or_a_reviewer(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = claimed(h)
    r = h.act("alice", bid, "unclaim", note="no time")
    assert r.json()["state"] == "open" and r.json()["claimant"] is None
    assert h.act("bob", bid, "claim").status_code == 200
    assert h.act("rita", bid, "unclaim", note="inactive").json()["state"] == "open"
    assert [e["actor"] for e in h.get(bid)["events"] if e["action"] == "unclaim"] == ["alice", "rita"]


def test_an_expired_claim_reverts_to_open_by_the_hub(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = claimed(h, claim_days=2)
    b = h.get(bid)
    assert _at(b["claim_expires_at"]) - _at(b["claimed_at"]) == dt.timedelta(days=2)
    h.shift(bid, claim_expires_at=utcnow() - dt.timedelta(minutes=1))
    h.version(REF, "passed")
    r = h.act("alice", bid, "submit", ref=REF)  # too late: the claim ran out
    assert r.status_code == 409 and "open" in r.json()["error"]
    b = h.get(bid)
    assert b["state"] == "open" and b["claimant"] is None
    expired = [e for e in b["events"] if e["action"] == "expire"]
    assert len(expired) == 1 and expired[0]["actor"] is None and "alice" in expired[0]["note"]
    assert h.act("bob", bid, "claim").json()["claimant"] == "bob"


def test_no_claims_or_submissions_after_the_deadline(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    soon = utcnow() + dt.timedelta(hours=5)
    bid = claimed(h, deadline=soon.isoformat() + "Z", claim_days=7)
    assert _at(h.get(bid)["claim_expires_at"]) == soon.replace(microsecond=0)  # not past the deadline
    assert h.act("alice", bid, "unclaim").status_code == 200
    h.shift(bid, deadline=utcnow() - dt.timedelta(seconds=1))
    r = h.act("bob", bid, "claim")
    assert r.status_code == 409 and "deadline" in r.json()["error"]
    assert h.get(bid)["deadline_passed"] is True and h.get(bid)["actions"] == []
    other = claimed(h)
    h.version(REF, "passed")
    h.shift(
        other, deadline=utcnow() - dt.timedelta(seconds=1), claim_expires_at=utcnow() + dt.timedelta(days=1)
    )
    assert h.act("alice", other, "submit", ref=REF).status_code == 409


def test_failed_review_resubmission_rejection_and_reopening(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = claimed(h)
    h.version("alice/arith@0.1.0", "failed")
    h.version("alice/arith@0.2.0", "passed")
    assert h.act("alice", bid, "submit", ref="alice/arith@0.1.0").json()["state"] == "review_failed"
    b = h.act("alice", bid, "submit", ref="alice/arith@0.2.0").json()  # the claimant resubmits
    assert b["state"] == "review_passed" and b["submission"]["ref"] == "alice/arith@0.2.0"
    h.act("rita", bid, "review")
    assert h.act("rita", bid, "reject", note="no tests").json()["state"] == "rejected"
    assert h.act("alice", bid, "reopen").status_code == 403
    b = h.act("rita", bid, "reopen", note="open to others").json()
    assert b["state"] == "open" and b["claimant"] is None and b["submission"] is None
    assert h.act("bob", bid, "claim").status_code == 200
    h.version("bob/quiz@1.0", "failed")
    h.act("bob", bid, "submit", ref="bob/quiz@1.0")
    assert h.act("root", bid, "reopen").json()["state"] == "open"
    states = [e["to"] for e in h.get(bid)["events"]]
    assert states.count("review_failed") == 2 and states.count("open") == 3


def test_a_private_version_stays_hidden(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    bid = claimed(h)
    h.version("lab/secretenv@1.0", "passed", private=True)
    assert h.act("alice", bid, "submit", ref="lab/secretenv@1.0").json()["state"] == "review_passed"
    for who in (None, "bob", "rita"):
        b = h.get(bid, who)
        assert b["submission"] == {"private": True, "ref": None}
        listed = h.client.get("/api/v1/bounties", headers=h.auth(who)).text
        page = h.client.get(f"/bounties/{bid}", headers=h.auth(who)).text
        for text in (str(b), listed, page):
            assert "secretenv" not in text
        assert "a private version" in page
    for who in ("alice", "root"):
        assert h.get(bid, who)["submission"]["ref"] == "lab/secretenv@1.0"
    # bob cannot tell a private version from a missing one when he submits it
    other = claimed(h, "bob")
    r = h.act("bob", other, "submit", ref="lab/secretenv@1.0")
    assert r.status_code == 400 and "no environment version" in r.json()["error"]


def test_two_racing_claims_take_one(bounty_hub: BountyHub) -> None:
    from hub.server.accounts.users import authenticate
    from hub.server.bounties.workflow import BountyError, act, get_bounty

    h = bounty_hub
    bid = int(h.create().json()["id"])
    make = h.client.app.state.sessions
    with make() as slow, make() as fast:
        stale = get_bounty(slow, bid)  # read while open (kept: the identity map holds it weakly)
        assert stale.state == "open"
        bob = authenticate(fast, h.tokens["bob"])
        act(fast, bob, bid, "claim")
        fast.commit()
        try:
            act(slow, authenticate(slow, h.tokens["alice"]), bid, "claim")
        except BountyError as exc:
            assert exc.problem.value == "conflict" and "changed meanwhile" in str(exc)
        else:
            raise AssertionError("the second claim went through")
    assert h.get(bid)["claimant"] == "bob"


def test_pages_board_filter_and_sanitised_spec(bounty_hub: BountyHub) -> None:
    h = bounty_hub
    h.create(title="Hostile", spec="<script>alert(1)</script>\n\n[x](javascript:alert(1)) **fine**")
    claimed(h, title="Taken one")
    board = h.client.get("/bounties?state=claimed")
    assert board.status_code == 200 and "Taken one" in board.text and "Hostile" not in board.text
    assert "script-src" not in board.headers["content-security-policy"]  # default-src 'none'
    page = h.client.get("/bounties/1").text
    assert "<script" not in page and 'href="javascript' not in page and "<strong>fine</strong>" in page
    assert h.client.get("/bounties?state=bogus").status_code == 404
    assert h.client.get("/bounties/42").status_code == 404


def test_migration_adds_the_reviewer_role_to_existing_owners(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        old = "INSERT INTO owners (name, kind, is_admin, created_at) VALUES ('old', 'user', 0, '2026-01-01')"
        conn.execute(text(old))
    assert migrate(engine) >= "0003"  # upgraded from 0002 through the bounties revision
    with Session(engine) as s:
        assert s.execute(text("SELECT is_reviewer FROM owners WHERE name = 'old'")).scalar() in (0, False)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0002")
        assert "bounties" not in {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master"))}
