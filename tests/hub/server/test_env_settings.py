"""An environment's settings page for its owners and the same actions in the API: visibility,
summary and tags, yank and un-yank; the page is 404 for anyone else, every form needs the CSRF
token, and the API keeps its refusals (403 for a non-owner, 404 for what one may not see)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from hub.server.core.models import Environment, Owner, Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import PASSWORD, Site, csrf, make_site, signed_in  # noqa: E402

from hub.server.accounts.passwords import set_password  # noqa: E402
from hub.server.admin import open_hub  # noqa: E402


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    for s in make_site(tmp_path):
        with open_hub(s.config) as session:
            set_password(session, "bob", PASSWORD)
            alice = session.scalars(select(Owner).where(Owner.name == "alice")).one()
            env = Environment(
                owner_id=alice.id, env_id="arith", distribution="verihub-arith", project="verihub-arith"
            )
            session.add(env)
            session.flush()
            for v in ("0.1.0", "0.2.0"):
                session.add(
                    Version(
                        environment_id=env.id,
                        version=v,
                        manifest_sha256="m",
                        content_hash="c",
                        state="passed",
                    )
                )
        yield s


def _env(site: Site) -> Environment:
    with open_hub(site.config) as s:
        env = s.scalars(select(Environment)).one()
        s.expunge(env)
        return env


def _yanked(site: Site) -> dict[str, str | None]:
    with open_hub(site.config) as s:
        return {v.version: (v.yank_reason if v.yanked else None) for v in s.scalars(select(Version))}


def test_owner_changes_everything_on_the_page(site: Site) -> None:
    alice = signed_in(site)
    env_page = alice.get("/alice/arith").text
    assert 'href="/alice/arith/settings"' in env_page
    page = alice.get("/alice/arith/settings")
    assert page.status_code == 200 and "Public: everyone sees it." in page.text
    token = csrf(alice, "/alice/arith/settings")
    r = alice.post("/alice/arith/settings/visibility", data={"csrf_token": token, "private": "1"})
    assert r.status_code == 303 and _env(site).private
    assert site.browser().get("/alice/arith").status_code == 404  # now private
    r = alice.post(
        "/alice/arith/settings/about",
        data={"csrf_token": token, "summary": "Sums,  checked", "tags": "Math, arith math"},
    )
    assert r.status_code == 303
    env = _env(site)
    assert env.summary == "Sums, checked" and env.tags == "math,arith"
    r = alice.post(
        "/alice/arith/settings/yank", data={"csrf_token": token, "version": "0.1.0", "reason": "bad grader"}
    )
    assert r.status_code == 303 and _yanked(site) == {"0.1.0": "bad grader", "0.2.0": None}
    r = alice.post(
        "/alice/arith/settings/yank", data={"csrf_token": token, "version": "0.2.0", "reason": " "}
    )
    assert r.status_code == 400 and "give a reason" in r.text
    r = alice.post("/alice/arith/settings/unyank", data={"csrf_token": token, "version": "0.1.0"})
    assert r.status_code == 303 and _yanked(site) == {"0.1.0": None, "0.2.0": None}
    r = alice.post("/alice/arith/settings/about", data={"csrf_token": token, "tags": "<script>"})
    assert r.status_code == 400 and "<script>" not in r.text


def test_others_get_404_and_forms_need_the_token(site: Site) -> None:
    bob = signed_in(site, "bob")
    assert bob.get("/alice/arith/settings").status_code == 404
    assert 'href="/alice/arith/settings"' not in bob.get("/alice/arith").text
    assert site.browser().get("/alice/arith/settings").status_code == 404
    token = csrf(bob, "/settings")
    r = bob.post("/alice/arith/settings/visibility", data={"csrf_token": token, "private": "1"})
    assert r.status_code == 403 and not _env(site).private
    alice = signed_in(site)
    for action, fields in (
        ("visibility", {"private": "1"}),
        ("about", {"summary": "x"}),
        ("yank", {"version": "0.1.0", "reason": "r"}),
        ("unyank", {"version": "0.1.0"}),
    ):
        assert alice.post(f"/alice/arith/settings/{action}", data=fields).status_code == 403
        assert (
            alice.post(f"/alice/arith/settings/{action}", data={**fields, "csrf_token": "0" * 64}).status_code
            == 403
        )
    assert not _env(site).private and _yanked(site)["0.1.0"] is None
    with open_hub(site.config) as s:
        s.scalars(select(Environment)).one().private = True
    assert bob.get("/alice/arith/settings").status_code == 404
    r = bob.post(
        "/alice/arith/settings/about", data={"csrf_token": csrf(bob, "/settings"), "summary": "mine"}
    )
    assert r.status_code == 404  # private: not even told it exists


def test_the_api_does_the_same_with_the_same_checks(site: Site) -> None:
    api = site.browser()
    alice = {"Authorization": f"Bearer {site.alice_token}"}
    r = api.post("/api/v1/envs/alice/arith/about", params={"summary": "Sums", "tags": "math"}, headers=alice)
    assert r.status_code == 200 and r.json()["tags"] == ["math"]
    assert api.post("/api/v1/envs/alice/arith/0.1.0/yank", params={"reason": "r"}, headers=alice).json()[
        "yanked"
    ]
    r = api.post("/api/v1/envs/alice/arith/0.1.0/unyank", headers=alice)
    assert r.status_code == 200 and r.json()["yanked"] is False
    assert api.post("/api/v1/envs/alice/arith/0.1.0/yank", headers=alice).status_code == 400
    assert api.post("/api/v1/envs/alice/arith/9.9.9/unyank", headers=alice).status_code == 404
    with open_hub(site.config) as s:
        from hub.server.accounts.users import create_token

        bob = {"Authorization": f"Bearer {create_token(s, 'bob', 'push')}"}
    assert api.post("/api/v1/envs/alice/arith/0.1.0/unyank", headers=bob).status_code == 403
    assert api.post("/api/v1/envs/alice/arith/about", params={"summary": "x"}, headers=bob).status_code == 403
    assert (
        api.post("/api/v1/envs/alice/arith/visibility", params={"private": "1"}, headers=bob).status_code
        == 403
    )
    assert api.post("/api/v1/envs/alice/arith/visibility", params={"private": "1"}, headers=alice).json()[
        "private"
    ]
    assert api.post("/api/v1/envs/alice/arith/about", params={"summary": "x"}, headers=bob).status_code == 404
    assert _env(site).summary == "Sums"
    assert re.fullmatch(r"math", _env(site).tags)
