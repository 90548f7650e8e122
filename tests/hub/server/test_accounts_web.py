"""Accounts in the browser (Starlette's test client, SQLite): sign-up by invitation or open
registration, argon2 at rest, sign-in and its rate limit, the session cookie's flags, sign-out
here and everywhere, the CSRF check on every form, tokens made on the settings page (shown once)
and through the API with the same checks, and invitations made by admins only."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from hub.server.accounts.passwords import set_password
from hub.server.admin import open_hub
from hub.server.core.models import Invitation, Owner, Token, WebSession

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import PASSWORD, Site, csrf, make_site, sign_in, sign_up, signed_in  # noqa: E402


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    yield from make_site(tmp_path)


def test_sign_up_needs_an_invitation_used_once(site: Site) -> None:
    client = site.browser()
    r = sign_up(client, "carol")
    assert r.status_code == 403 and "invitation" in r.text
    r = sign_up(client, "carol", invitation="vhi_" + "x" * 43)
    assert r.status_code == 403 and "not valid" in r.text
    code = site.invite(reviewer=True)
    r = sign_up(client, "carol", invitation=code)
    assert r.status_code == 303 and r.headers["location"] == "/settings"
    page = client.get("/settings")
    assert page.status_code == 200 and 'id="viewer">carol<' in page.text
    with open_hub(site.config) as s:
        carol = s.scalars(select(Owner).where(Owner.name == "carol")).one()
        assert carol.is_reviewer  # the invitation's role
        inv = s.scalars(select(Invitation)).one()
        assert inv.used_by_id == carol.id and code not in inv.code_hash
    again = site.browser()
    assert sign_up(again, "dave", invitation=code).status_code == 403  # single use
    expired = site.invite(days=1e-9)
    assert sign_up(again, "dave", invitation=expired).status_code == 403


@pytest.mark.slow
def test_open_registration_needs_no_invitation(tmp_path: Path) -> None:
    for site in make_site(tmp_path, open_registration=True):
        client = site.browser()
        r = sign_up(client, "erin")
        assert r.status_code == 303, r.text
        assert 'id="viewer">erin<' in client.get("/").text
        assert sign_up(site.browser(), "erin").status_code == 409  # the name is taken
        assert sign_up(site.browser(), "api").status_code == 400  # a reserved name


def test_password_is_an_argon2_hash_at_rest_and_a_wrong_one_is_refused(site: Site) -> None:
    with open_hub(site.config) as s:
        stored = s.scalars(select(Owner.password_hash).where(Owner.name == "alice")).one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    client = site.browser()
    r = sign_in(client, password="wrong password!")
    assert r.status_code == 401 and "wrong user name or password" in r.text
    assert sign_in(client, name="bob").status_code == 401  # bob has no password
    assert sign_in(client, name="nobody").status_code == 401
    assert 'href="/sign-in">sign in<' in client.get("/").text


def test_short_password_refused_at_sign_up(tmp_path: Path) -> None:
    for site in make_site(tmp_path, open_registration=True):
        r = sign_up(site.browser(), "frank", password="short")
        assert r.status_code == 400 and "at least" in r.text


@pytest.mark.slow
def test_sign_in_is_rate_limited(site: Site) -> None:
    client = site.browser()
    for _ in range(site.config.auth_failures_per_minute):
        assert sign_in(client, password="wrong password!").status_code == 401
    r = sign_in(client)  # the right password, but too late
    assert r.status_code == 429


def test_session_cookie_flags(site: Site) -> None:
    client = site.browser()
    r = sign_in(client)
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("vh_session=")
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert "secure" not in flags  # plain http on loopback only
    secret = cookie.split(";")[0].split("=", 1)[1]
    with open_hub(site.config) as s:
        ids = s.scalars(select(WebSession.id)).all()
    assert len(ids) == 1 and secret not in ids[0]  # stored hashed


def test_secure_cookie_off_loopback(site: Site) -> None:
    client = TestClient(site.app, base_url="https://hub.example", follow_redirects=False)
    r = sign_in(client)
    assert r.status_code == 303
    cookie = r.headers["set-cookie"]
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert cookie.startswith("__Host-vh_session=") and "secure" in flags and "httponly" in flags
    assert 'id="viewer">alice<' in client.get("/settings").text


def test_sign_out_and_sign_out_everywhere(site: Site) -> None:
    one, two, three = signed_in(site), signed_in(site), signed_in(site)
    token = csrf(one, "/settings")
    r = one.post("/sign-out", data={"csrf_token": token})
    assert r.status_code == 303
    assert one.get("/settings").status_code == 303  # back to sign-in
    assert two.get("/settings").status_code == 200
    r = two.post("/sign-out-everywhere", data={"csrf_token": csrf(two, "/settings")})
    assert r.status_code == 303
    assert two.get("/settings").status_code == 303 and three.get("/settings").status_code == 303
    with open_hub(site.config) as s:
        assert s.scalars(select(WebSession)).all() == []


def test_sign_out_everywhere_through_the_api(site: Site) -> None:
    browser = signed_in(site)
    api = site.browser()
    r = api.post("/api/v1/sessions/revoke", headers={"Authorization": f"Bearer {site.alice_token}"})
    assert r.status_code == 200 and r.json() == {"ended": 1}
    assert browser.get("/settings").status_code == 303


FORMS = [
    ("/sign-out", False),
    ("/sign-out-everywhere", False),
    ("/settings/tokens", False),
    ("/settings/tokens/000000000000/revoke", False),
    ("/admin/invitations", False),
    ("/sign-in", True),
    ("/sign-up", True),
]


@pytest.mark.parametrize(("path", "anonymous"), FORMS)
def test_every_form_refuses_a_missing_or_wrong_csrf_token(site: Site, path: str, anonymous: bool) -> None:
    client = signed_in(site, "root")
    if anonymous:
        client = site.browser()
        csrf(client)  # the browser has its anonymous cookie
    fields = {"name": "root", "password": PASSWORD, "scope": "read", "expires_days": "1"}
    for token in (None, "", "0" * 64):
        data = dict(fields) if token is None else {**fields, "csrf_token": token}
        r = client.post(path, data=data)
        assert r.status_code == 403, (path, token, r.text)
        assert "security token" in r.text and "<h1>Refused</h1>" in r.text
    # another browser's token is not this one's
    other = signed_in(site, "alice") if not anonymous else site.browser()
    r = client.post(
        path, data={**fields, "csrf_token": csrf(other, "/settings" if not anonymous else "/sign-in")}
    )
    assert r.status_code == 403


def test_forms_refuse_a_browser_not_signed_in(site: Site) -> None:
    client = site.browser()
    token = csrf(client)  # an anonymous token does not make a session
    r = client.post("/settings/tokens", data={"csrf_token": token, "scope": "read"})
    assert r.status_code == 401 and "Sign in first" in r.text


def test_token_shown_once_then_only_listed_and_revoked(site: Site) -> None:
    client = signed_in(site)
    r = client.post(
        "/settings/tokens",
        data={"csrf_token": csrf(client, "/settings"), "scope": "read", "expires_days": "30"},
    )
    assert r.status_code == 201
    text = re.search(r'id="new-token">(vh_[0-9a-f]{12}_[A-Za-z0-9_-]{43})<', r.text)
    assert text is not None
    token = text.group(1)
    listed = client.get("/settings").text
    token_id = token[3:15]
    assert f"vh_{token_id}" in listed and token not in listed
    who = site.browser().get("/api/v1/whoami", headers={"Authorization": f"Bearer {token}"})
    assert who.status_code == 200 and who.json()["name"] == "alice"
    with open_hub(site.config) as s:
        row = s.get(Token, token_id)
        assert row is not None and row.expires_at is not None and token[16:] not in row.hash
    r = client.post(f"/settings/tokens/{token_id}/revoke", data={"csrf_token": csrf(client, "/settings")})
    assert r.status_code == 303
    assert (
        site.browser().get("/api/v1/whoami", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    )
    assert "revoked" in client.get("/settings").text


def test_another_users_token_cannot_be_revoked(site: Site) -> None:
    root_token_id = site.admin_token[3:15]
    client = signed_in(site)
    r = client.post(
        f"/settings/tokens/{root_token_id}/revoke", data={"csrf_token": csrf(client, "/settings")}
    )
    assert r.status_code == 404
    r = site.browser().post(
        f"/api/v1/tokens/{root_token_id}/revoke", headers={"Authorization": f"Bearer {site.alice_token}"}
    )
    assert r.status_code == 404
    with open_hub(site.config) as s:
        row = s.get(Token, root_token_id)
        assert row is not None and row.revoked_at is None


def test_token_api_has_the_pages_checks(site: Site) -> None:
    api = site.browser()
    auth = {"Authorization": f"Bearer {site.alice_token}"}
    r = api.post("/api/v1/tokens", params={"scope": "read", "expires_days": "7"}, headers=auth)
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["scope"] == "read" and made["token"].startswith(f"vh_{made['id']}_")
    listed = api.get("/api/v1/tokens", headers=auth).json()["tokens"]
    assert {t["id"] for t in listed} >= {made["id"]} and all("token" not in t for t in listed)
    assert api.post("/api/v1/tokens", params={"scope": "admin"}, headers=auth).status_code == 403
    assert api.post("/api/v1/tokens", params={"scope": "sudo"}, headers=auth).status_code == 400
    assert (
        api.post("/api/v1/tokens", params={"scope": "read", "expires_days": "0"}, headers=auth).status_code
        == 400
    )
    weak = {"Authorization": f"Bearer {made['token']}"}
    assert api.post("/api/v1/tokens", params={"scope": "push"}, headers=weak).status_code == 403
    assert api.post("/api/v1/tokens", params={"scope": "read"}).status_code == 401
    assert api.post(f"/api/v1/tokens/{made['id']}/revoke", headers=auth).status_code == 200
    assert api.get("/api/v1/tokens", headers=weak).status_code == 401


def test_cookies_never_authenticate_an_api_write(site: Site) -> None:
    client = signed_in(site)
    assert client.get("/api/v1/whoami").json()["name"] == "alice"  # reads: the session
    assert client.post("/api/v1/tokens", params={"scope": "read"}).status_code == 401


def test_invitations_are_for_admins(site: Site) -> None:
    alice = signed_in(site)
    assert alice.get("/admin/invitations").status_code == 404
    r = alice.post("/admin/invitations", data={"csrf_token": csrf(alice, "/settings"), "expires_days": "1"})
    assert r.status_code == 404
    auth = {"Authorization": f"Bearer {site.alice_token}"}
    assert site.browser().post("/api/v1/invitations", headers=auth).status_code == 403
    root = signed_in(site, "root")
    r = root.post(
        "/admin/invitations", data={"csrf_token": csrf(root, "/admin/invitations"), "reviewer": "1"}
    )
    assert r.status_code == 201
    code = re.search(r'id="new-code">(vhi_[A-Za-z0-9_-]+)<', r.text)
    assert code is not None and code.group(1) not in root.get("/admin/invitations").text
    assert sign_up(site.browser(), "gina", invitation=code.group(1)).status_code == 303
    r = site.browser().post("/api/v1/invitations", headers={"Authorization": f"Bearer {site.admin_token}"})
    assert r.status_code == 201 and r.json()["code"].startswith("vhi_")


def test_sign_in_goes_back_only_to_this_hub(site: Site) -> None:
    for target, expected in (
        ("/bounties", "/bounties"),
        ("//evil.example/", "/settings"),
        ("https://evil.example", "/settings"),
    ):
        client = site.browser()
        data = {"name": "alice", "password": PASSWORD, "next": target, "csrf_token": csrf(client)}
        r = client.post("/sign-in", data=data)
        assert r.status_code == 303 and r.headers["location"] == expected


def _private_env(site: Site, owner: str = "alice", env_id: str = "secret_env") -> None:
    from hub.server.core.models import Environment, Version

    with open_hub(site.config) as s:
        who = s.scalars(select(Owner).where(Owner.name == owner)).one()
        env = Environment(owner_id=who.id, env_id=env_id, distribution="secret-env", project="secret-env")
        env.private = True
        s.add(env)
        s.flush()
        s.add(
            Version(
                environment_id=env.id, version="0.1.0", manifest_sha256="m", content_hash="c", state="passed"
            )
        )


def test_a_session_sees_its_own_private_things_and_nobody_elses(site: Site) -> None:
    _private_env(site)
    alice = signed_in(site)
    page = alice.get("/alice/secret_env")
    assert page.status_code == 200 and "secret_env" in page.text
    assert alice.get("/api/v1/envs/alice/secret_env").status_code == 200
    with open_hub(site.config) as s:
        set_password(s, "bob", PASSWORD)
    bob = signed_in(site, "bob")
    assert bob.get("/alice/secret_env").status_code == 404
    assert bob.get("/api/v1/envs/alice/secret_env").status_code == 404
    assert site.browser().get("/alice/secret_env").status_code == 404
    assert "secret_env" not in bob.get("/").text


def test_every_post_form_in_a_template_carries_the_csrf_field() -> None:
    templates = Path(__file__).resolve().parents[3] / "hub" / "server" / "web" / "templates"
    forms = 0
    for page in templates.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        for form in re.findall(r"<form\b[^>]*>.*?</form>", html, flags=re.S | re.I):
            if re.search(r'method="post"', form, flags=re.I):
                forms += 1
                assert "{{ csrf_field }}" in form, f"{page.name}: a POST form without {{{{ csrf_field }}}}"
    assert forms >= 10


def test_a_new_password_ends_the_users_sessions(site: Site) -> None:
    browser = signed_in(site)
    with open_hub(site.config) as s:
        set_password(s, "alice", "another long password")
    assert browser.get("/settings").status_code == 303
    assert sign_in(site.browser()).status_code == 401


def test_a_form_without_a_session_is_refused_before_its_body_is_read(site: Site) -> None:
    read = 0

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        async def counted() -> Any:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
            return message

        await site.app(scope, counted, send)

    client = TestClient(counting, base_url="http://127.0.0.1", follow_redirects=False)
    r = client.post("/settings/tokens", data={"scope": "read", "pad": "x" * 100_000})
    assert r.status_code == 401 and read == 0
    r = client.post("/sign-in", data={"name": "alice", "password": "x"})  # anonymous forms read it
    assert r.status_code == 403 and read > 0
