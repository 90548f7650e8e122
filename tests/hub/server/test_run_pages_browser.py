"""The run pages in a real browser (Chromium through Playwright) at 1280 and 390 px: a run page,
a rollout page with hostile content and a 1 MB message, and a task across runs render under the
page policy with no console error and never scroll sideways; the rollout filters work with
scripts off. Screenshots as in ``test_result_pages_browser`` (``VERIHUB_SCREENSHOTS=DIR``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_seed import seed  # noqa: E402
from serving import serve_http  # noqa: E402
from test_result_pages_browser import ARGS, CHROMIUM, _check_page  # noqa: E402
from test_run_pages import push  # noqa: E402

from hub.server.results.rollout_store import backfill  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


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


@pytest.fixture
def site(hub: Any, tmp_path: Path) -> Iterator[tuple[str, str, int]]:
    seed(hub, tmp_path / "runs")
    run = push(hub, tmp_path, "alice", "model-hostile", public=True)
    backfill(hub.sessions(), hub.client.app.state.storage)
    html = hub.client.get(f"/runs/{run}?task=t0&sort=task").text
    hostile = int(html.split(f'href="/runs/{run}/rollouts/', 1)[1].split('"', 1)[0])
    with serve_http(hub.client.app) as url:
        yield url, run, hostile


@pytest.mark.parametrize("width", [1280, 390])
def test_run_pages_render_at_desktop_and_phone_width(
    site: tuple[str, str, int], browser: Any, shots: Path, width: int
) -> None:
    url, run, hostile = site
    pages = {
        "run": f"/runs/{run}",
        "rollout": f"/runs/{run}/rollouts/{hostile}",
        "task": "/alice/toy/tasks/t0",
    }
    for name, path in pages.items():
        _check_page(browser, url + path, width, 0, shots / f"run-pages-{name}-{width}.png")


def test_rollout_filters_work_without_scripts(site: tuple[str, str, int], browser: Any, shots: Path) -> None:
    url, run, _ = site
    context = browser.new_context(viewport={"width": 390, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{url}/runs/{run}")
        page.select_option("form.filters select[name=status]", "errored")
        page.click("form.filters button[type=submit]")
        page.wait_for_load_state()
        assert "status=errored" in page.url
        rows = page.locator("table.rollouts tbody tr")
        assert rows.count() == 4 and all("errored" in rows.nth(i).inner_text() for i in range(4))
        page.screenshot(path=str(shots / "run-pages-filtered-390.png"), full_page=True)
    finally:
        context.close()
