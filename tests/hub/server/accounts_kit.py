"""A hub application with users and passwords for the account tests, and a browser's steps
(read a form's CSRF token, sign in, sign up)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from hub.server.accounts.invitations import create_invitation
from hub.server.accounts.passwords import set_password
from hub.server.accounts.users import add_user, create_token
from hub.server.admin import open_hub
from hub.server.app import create_app
from hub.server.core.config import HubConfig

__all__ = ["BASE", "PASSWORD", "Site", "csrf", "make_site", "sign_in", "sign_up", "signed_in"]

BASE = "http://127.0.0.1"
PASSWORD = "correct horse battery"
_CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


@dataclass
class Site:
    config: HubConfig
    app: Any
    admin_token: str
    alice_token: str

    def browser(self) -> TestClient:
        return TestClient(self.app, base_url=BASE, follow_redirects=False)

    def invite(self, reviewer: bool = False, days: float = 7.0) -> str:
        with open_hub(self.config) as s:
            return create_invitation(s, reviewer=reviewer, expires_days=days)


def make_site(tmp_path: Path, *, open_registration: bool = False) -> Iterator[Site]:
    config = HubConfig(data=tmp_path / "hub", open_registration=open_registration)
    with open_hub(config) as s:
        add_user(s, "root", admin=True)
        add_user(s, "alice")
        add_user(s, "bob")
        set_password(s, "alice", PASSWORD)
        set_password(s, "root", PASSWORD)
        admin_token = create_token(s, "root", "admin")
        alice_token = create_token(s, "alice", "push")
    app = create_app(config)
    with TestClient(app, base_url=BASE):
        yield Site(config, app, admin_token, alice_token)


def csrf(client: TestClient, path: str = "/sign-in") -> str:
    r = client.get(path)
    assert r.status_code == 200, r.text
    found = _CSRF.search(r.text)
    assert found is not None, r.text
    return found.group(1)


def sign_in(client: TestClient, name: str = "alice", password: str = PASSWORD) -> Any:
    return client.post("/sign-in", data={"name": name, "password": password, "csrf_token": csrf(client)})


def signed_in(site: Site, name: str = "alice") -> TestClient:
    client = site.browser()
    r = sign_in(client, name)
    assert r.status_code == 303, r.text
    return client


def sign_up(client: TestClient, name: str, invitation: str = "", password: str = PASSWORD) -> Any:
    data = {"name": name, "password": password, "password2": password, "invitation": invitation}
    return client.post("/sign-up", data={**data, "csrf_token": csrf(client, "/sign-up")})
