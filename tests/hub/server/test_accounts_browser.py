"""The account pages in a real browser (Debian's Chromium through Playwright), at 1280 and 390 px:
a person signs up with an invitation, makes a token (shown once), revokes it, opens an
environment's settings and signs out, with real cookies over http on 127.0.0.1; nothing is wider
than the screen. Screenshots go to test-artifacts/hub/accounts/ (git-ignored).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import PASSWORD, Site, make_site  # noqa: E402
from serving import serve_http  # noqa: E402

from hub.server.admin import open_hub  # noqa: E402
from hub.server.core.models import Environment, Owner, Version  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "hub" / "accounts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
WIDTHS = {"wide": 1280, "narrow": 390}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Site, str]]:
    for s in make_site(tmp_path):
        with serve_http(s.app) as url:
            yield s, url


def _fits(pg: Any, shot: str) -> None:
    overflow = pg.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{shot}: {overflow}px wider than the screen"
    pg.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_sign_up_token_settings_sign_out(site: tuple[Site, str], width: str) -> None:
    from playwright.sync_api import sync_playwright

    s, url = site
    code = s.invite()
    name = f"user-{width}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            pg = browser.new_context(viewport={"width": WIDTHS[width], "height": 900}).new_page()
            pg.goto(f"{url}/sign-up")
            _fits(pg, f"sign-up-{width}")
            pg.fill("input[name=name]", name)
            pg.fill("input[name=password]", PASSWORD)
            pg.fill("input[name=password2]", PASSWORD)
            pg.fill("input[name=invitation]", code)
            pg.click("form.account button[type=submit]")
            assert pg.url == f"{url}/settings" and pg.inner_text("#viewer") == name
            cookies = {c["name"]: c for c in pg.context.cookies()}
            assert cookies["vh_session"]["httpOnly"] and cookies["vh_session"]["sameSite"] == "Lax"
            pg.select_option("select[name=scope]", "read")
            pg.click("form.account button[type=submit]")
            token = pg.inner_text("#new-token").strip()
            assert token.startswith("vh_")
            _fits(pg, f"settings-new-token-{width}")
            pg.goto(f"{url}/settings")
            assert token not in pg.content() and f"vh_{token[3:15]}" in pg.content()
            pg.click(f"#token-{token[3:15]} button")
            assert "revoked" in pg.inner_text(f"#token-{token[3:15]}")
            with open_hub(s.config) as session:
                me = session.scalars(select(Owner).where(Owner.name == name)).one()
                env = Environment(
                    owner_id=me.id, env_id="arith", distribution=f"{name}-arith", project=f"{name}-arith"
                )
                session.add(env)
                session.flush()
                session.add(
                    Version(
                        environment_id=env.id,
                        version="0.1.0",
                        manifest_sha256="m",
                        content_hash="c",
                        state="passed",
                    )
                )
            pg.goto(f"{url}/{name}/arith")
            pg.click("a.settings")
            pg.fill("input[name=reason]", "grader accepts empty answers")
            pg.click("#version-0\\.1\\.0 button")
            assert "grader accepts empty answers" in pg.inner_text("#version-0\\.1\\.0")
            _fits(pg, f"env-settings-{width}")
            pg.click("header button.link")  # sign out
            assert "sign in" in pg.inner_text("header nav.account")
            pg.goto(f"{url}/settings")
            assert pg.url.startswith(f"{url}/sign-in")
            _fits(pg, f"sign-in-{width}")
        finally:
            browser.close()
