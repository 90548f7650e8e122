"""The hub's web pages in a real browser (Debian's Chromium through Playwright): search, open an
environment, read its review report; a README carrying script, ``onerror`` and ``javascript:``
payloads executes nothing; a private environment does not appear to others.

Screenshots go to test-artifacts/hub/ (git-ignored).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import serve_http  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "hub"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
HOSTILE = """# Hostile README

<script>document.title='pwned-script'</script>

<img src=x onerror="document.title='pwned-img'">

[click me](javascript:document.title='pwned-link')

<a href="#" onclick="document.title='pwned-click'">raw link</a>

Plain **bold** text stays.
"""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def site(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], variant: Callable[..., Path]
) -> Iterator[str]:
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    hostile = variant(arith_bundle, distribution="evil-readme", readme=HOSTILE)
    assert hub.push(hostile, "bob").status_code == 201
    secret = variant(arith_bundle, distribution="secret-env", summary="Top secret")
    assert hub.push(secret, "alice", owner="lab", private="1").status_code == 201
    hub.review()
    with serve_http(hub.client.app) as url:
        yield url


@pytest.fixture
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        pg = context.new_page()
        pg.errors = []
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))
        try:
            yield pg
        finally:
            browser.close()


def test_search_open_and_read_the_review_report(site: str, page: Any) -> None:
    page.goto(site + "/")
    assert "Top secret" not in page.content()  # lab's private environment
    page.fill("input[name=q]", "arith")
    page.click("header button[type=submit]")
    page.wait_for_load_state()
    assert "q=arith" in page.url
    page.screenshot(path=str(ARTIFACTS / "search.png"), full_page=True)
    page.click("a.env:text('alice/arith')")
    page.wait_for_load_state()
    assert page.url.endswith("/alice/arith")
    assert "verihub install alice/arith --hub" in page.inner_text("pre.install")
    page.click("details.review-report summary")
    report = page.inner_text("details.review-report pre.check")
    assert "PASSED" in report and "hacking_probes" in report
    assert page.inner_text("table.versions .badge.passed") == "passed"
    page.screenshot(path=str(ARTIFACTS / "environment.png"), full_page=True)
    page.goto(site + "/lab/arith")
    assert "Top secret" not in page.content() and "No environment matches" in page.content()
    assert page.errors == []


def test_hostile_readme_executes_nothing(site: str, page: Any) -> None:
    page.goto(site + "/bob/arith")
    readme = page.locator("section.readme")
    assert "Plain" in readme.inner_text() and readme.locator("strong").inner_text() == "bold"
    assert readme.locator("script").count() == 0
    assert page.locator("[onerror], [onclick]").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    for link in ("raw link", "click me"):
        if page.locator(f"text={link}").count():
            page.locator(f"text={link}").first.click()
    time.sleep(0.3)
    assert "pwned" not in page.title()
    assert page.evaluate("document.title").startswith("bob/arith")
    page.screenshot(path=str(ARTIFACTS / "hostile-readme.png"), full_page=True)
    assert page.errors == []
