"""An environment's settings page for its owners and the same actions in the API: visibility,
summary and tags, yank and un-yank, transfer to an organisation; the page is 404 for anyone
else, every form needs the CSRF token, and the API keeps its refusals (403 for a non-owner, 404
for what one may not see)."""

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
from serving import serve_http  # noqa: E402

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


def _orgs(site: Site) -> None:
    from hub.server.accounts.users import add_org

    with open_hub(site.config) as s:
        add_org(s, "lab", members=["alice"])
        add_org(s, "other", members=["bob"])


def test_owner_transfers_to_an_organisation_they_belong_to(site: Site) -> None:
    _orgs(site)
    alice = signed_in(site)
    token = csrf(alice, "/alice/arith/settings")
    assert "/alice/arith/settings/transfer" in alice.get("/alice/arith/settings").text
    r = alice.post("/alice/arith/settings/transfer", data={"csrf_token": token, "to": "other"})
    assert r.status_code == 403 and "not a member of other" in r.text  # not a member
    r = alice.post("/alice/arith/settings/transfer", data={"csrf_token": token, "to": "nobody"})
    assert r.status_code == 404
    r = alice.post("/alice/arith/settings/transfer", data={"csrf_token": "0" * 64, "to": "lab"})
    assert r.status_code == 403 and _env(site).owner_id != _owner_id(site, "lab")
    r = alice.post("/alice/arith/settings/transfer", data={"csrf_token": token, "to": "lab"})
    assert r.status_code == 303 and r.headers["location"] == "/lab/arith/settings"
    assert _env(site).owner_id == _owner_id(site, "lab")
    assert alice.get("/lab/arith").status_code == 200
    assert alice.get("/alice/arith").status_code == 404
    assert [v for v in _yanked(site)] == ["0.1.0", "0.2.0"]  # the versions moved with it
    bob = signed_in(site, "bob")
    assert bob.get("/lab/arith/settings").status_code == 404  # bob is not in lab


def test_transfer_through_the_api_refuses_a_taken_id(site: Site) -> None:
    _orgs(site)
    with open_hub(site.config) as s:
        lab = s.scalars(select(Owner).where(Owner.name == "lab")).one()
        s.add(
            Environment(
                owner_id=lab.id, env_id="arith", distribution="verihub-lab-arith", project="verihub-lab-arith"
            )
        )
    api = site.browser()
    alice = {"Authorization": f"Bearer {site.alice_token}"}
    r = api.post("/api/v1/envs/alice/arith/transfer", params={"to": "lab"}, headers=alice)
    assert r.status_code == 409 and "already has an environment 'arith'" in r.text
    r = api.post("/api/v1/envs/alice/arith/transfer", params={"to": "alice"}, headers=alice)
    assert r.status_code == 404  # a user, not an organisation
    with open_hub(site.config) as s:
        s.delete(s.scalars(select(Environment).where(Environment.owner_id == lab.id)).one())
    r = api.post("/api/v1/envs/alice/arith/transfer", params={"to": "lab"}, headers=alice)
    assert r.status_code == 200 and r.json() == {"ref": "lab/arith", "owner": "lab"}
    assert (
        api.post("/api/v1/envs/alice/arith/transfer", params={"to": "lab"}, headers=alice).status_code == 404
    )


def _owner_id(site: Site, name: str) -> int:
    with open_hub(site.config) as s:
        return s.scalars(select(Owner.id).where(Owner.name == name)).one()


def test_verihub_transfer_moves_it_from_the_command_line(
    site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hub.cli.entry import main

    _orgs(site)
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "config.toml"))  # no stored login

    def run(*args: str) -> tuple[int, str]:
        with pytest.raises(SystemExit) as done:
            main(list(args))
        out = capsys.readouterr()
        return int(done.value.code or 0), out.out + out.err

    with serve_http(site.app) as url:
        code, out = run(
            "transfer", "alice/arith@0.1.0", "--to", "lab", "--hub", url, "--token", site.alice_token
        )
        assert code != 0 and "drop @0.1.0" in out
        code, out = run("transfer", "alice/arith", "--to", "other", "--hub", url, "--token", site.alice_token)
        assert code != 0 and "403" in out
        code, out = run("transfer", "alice/arith", "--to", "lab", "--hub", url, "--token", site.alice_token)
        assert code == 0 and "alice/arith is lab/arith now" in out
    assert _env(site).owner_id == _owner_id(site, "lab")
