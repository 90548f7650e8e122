"""The environment page and the sortable tables in Chromium (Playwright), at desktop (1280 px) and
phone (390 px) width, with scripts off: the README comes first, the body never scrolls sideways,
table rows stack into labelled cards on a phone, and a header link sorts a table.

Screenshots are saved under a temporary folder (printed; ``VERIHUB_SCREENSHOTS=DIR`` keeps them
in ``DIR``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from envpage_seed import seed_env_page  # noqa: E402
from serving import serve_http  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
PAGES = {
    "env": "/alice/toy",
    "home-sorted": "/?sort=-installs",
    "versions-sorted": "/alice/toy?sort=version#versions",
    "owner": "/bob?sort=-name",
    "board-sorted": "/alice/toy/leaderboard?sort=model",
    "cross-sorted": "/leaderboard?sort=model",
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def site(hub: Any, tmp_path: Path) -> Iterator[str]:
    seeded = seed_env_page(hub, tmp_path)
    hub.client.get(f"/files/{seeded['sha']}/alice_toy-1.1.0-py3-none-any.whl")  # one install
    with serve_http(hub.client.app) as url:
        yield url


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("VERIHUB_SCREENSHOTS") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {out}")
    return out


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _open(browser: Any, url: str, width: int) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    response = page.goto(url)
    page.wait_for_load_state("load")
    assert response is not None and response.status == 200
    return context, page, errors


def _no_sideways_scroll(page: Any, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate("document.body.scrollWidth") <= width


@pytest.mark.parametrize("width", [1280, 390])
def test_pages_render_without_sideways_scroll(site: str, browser: Any, shots: Path, width: int) -> None:
    for name, path in PAGES.items():
        context, page, errors = _open(browser, site + path, width)
        try:
            assert errors == [], (name, errors)  # a refused style or resource is a console error
            assert page.locator("main > h1, main .results > h1").first.is_visible()
            _no_sideways_scroll(page, width)
            sizes = page.evaluate(
                "[...document.querySelectorAll('td')].map(td => parseFloat(getComputedStyle(td).fontSize))"
            )
            assert sizes and min(sizes) >= 12, name
            shot = shots / f"{name}-{width}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
        finally:
            context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_env_page_leads_with_the_readme(site: str, browser: Any, width: int) -> None:
    context, page, _ = _open(browser, site + "/alice/toy", width)
    try:
        tops = [
            page.locator(sel).bounding_box()["y"]
            for sel in ("section.readme", "section#results", "section#versions")
        ]
        assert tops == sorted(tops)
        assert page.locator("#installs").inner_text() == "1"
        assert page.locator("#author a").get_attribute("href") == "/alice"
        slots = page.locator("table.versions .verifier-card")
        assert slots.count() == 3 and slots.first.inner_text() == "error rate not measured"
        cell = page.locator("table.versions td[data-label=uploaded]").first
        # a phone stacks each row into labelled lines; a desktop keeps the table
        display = cell.evaluate("td => getComputedStyle(td).display")
        assert display == ("flow-root" if width < 640 else "table-cell")
        if width < 640:
            label = cell.evaluate("td => getComputedStyle(td, '::before').content")
            assert label == '"uploaded"'
        for box in page.locator("div.scroll, pre, table").all():
            b = box.bounding_box()
            assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= width + 1
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_header_link_sorts_the_table_without_scripts(
    site: str, browser: Any, shots: Path, width: int
) -> None:
    context, page, _ = _open(browser, site + "/", width)
    try:
        names = page.locator("table.envs a.env")
        assert names.all_inner_texts() == ["alice/toy", "bob/other"]
        page.click("table.envs th a:has-text('environment')")  # sorted by name: now the other way
        page.wait_for_load_state()
        assert "sort=-name" in page.url
        assert names.all_inner_texts() == ["bob/other", "alice/toy"]
        page.click("table.envs th a:has-text('installs')")
        page.wait_for_load_state()
        assert "sort=-installs" in page.url and names.all_inner_texts()[0] == "alice/toy"
        page.select_option("form.filters select[name=state]", "failed")
        page.click("form.filters button[type=submit]")
        page.wait_for_load_state()
        assert "state=failed" in page.url and "sort=-installs" in page.url
        assert names.all_inner_texts() == ["bob/other"]
        _no_sideways_scroll(page, width)
        page.screenshot(path=str(shots / f"home-filtered-{width}.png"), full_page=True)
    finally:
        context.close()
