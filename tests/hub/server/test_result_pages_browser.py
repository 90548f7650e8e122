"""The result pages in a real browser (Debian's Chromium through Playwright) at desktop (1280 px)
and phone (390 px) width: the eval card, an environment's leaderboard and the cross-environment
leaderboard render under the hub's page policy (no script, ``style-src 'self'``) with no console
error, their plots are drawn in colour at a readable size, and the page never scrolls sideways
(wide tables scroll in their own box).

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
from results_seed import seed  # noqa: E402
from serving import serve_http  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
BAR_BLUE = (76, 120, 168)  # #4c78a8, the bars of the scores plot
PAGES = {
    "card": ("/alice/toy/v/1.0.0", 3),
    "env-leaderboard": ("/alice/toy/leaderboard", 9),
    "leaderboard": ("/leaderboard", 0),
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def site(hub: Any, tmp_path: Path) -> Iterator[str]:
    seed(hub, tmp_path / "runs")
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


def _blue_share(png: Path) -> float:
    """Share of the image's pixels in the bar colour (a plot whose styles were refused has none)."""
    from PIL import Image

    with Image.open(png) as img:
        rgb = img.convert("RGB")
        colours = rgb.getcolors(rgb.width * rgb.height) or []
    total = sum(n for n, _ in colours)
    close = 0
    for n, colour in colours:
        rgb_values = colour if isinstance(colour, tuple) else (colour,) * 3
        if all(abs(a - b) <= 6 for a, b in zip(rgb_values, BAR_BLUE, strict=True)):
            close += n
    return close / max(total, 1)


def _check_page(browser: Any, url: str, width: int, n_plots: int, shot: Path) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    errors: list[str] = []
    foreign: list[str] = []
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request",
        lambda r: (
            None
            if r.url.startswith(url.split("/", 3)[0] + "//" + url.split("/")[2])
            else foreign.append(r.url)
        ),
    )
    try:
        response = page.goto(url)
        page.wait_for_load_state("load")
        assert response is not None and response.status == 200
        assert errors == [], errors  # a refused inline style is a console error under the policy
        assert foreign == []
        assert page.locator("h1").is_visible()
        # never sideways: the document is no wider than the screen; wide tables scroll in their box
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate("document.body.scrollWidth") <= width
        for box in page.locator("div.scroll").all():
            b = box.bounding_box()
            assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= width + 1
        # readable text: table cells at least 12 px, header cells at least a word wide
        sizes = page.evaluate(
            "[...document.querySelectorAll('td')].map(td => parseFloat(getComputedStyle(td).fontSize))"
        )
        assert sizes and min(sizes) >= 12
        narrowest = page.evaluate(
            "Math.min(...[...document.querySelectorAll('th')].map(th => th.getBoundingClientRect().width))"
        )
        assert narrowest >= 18
        svgs = page.locator(".plot svg")
        assert svgs.count() == n_plots
        for i in range(n_plots):
            b = svgs.nth(i).bounding_box()
            assert b is not None and b["width"] >= min(300, width - 60) and b["height"] > 100
            assert b["x"] >= 0 and b["x"] + b["width"] <= width + 1
        # nothing drawn outside the figure (a two-column legend of long labels was cut at both ends)
        outside = page.evaluate(
            "[...document.querySelectorAll('.plot svg')].filter(s => { const b = s.getBBox(),"
            " v = s.viewBox.baseVal; return b.x < v.x - 1 || b.x + b.width > v.x + v.width + 1 }).length"
        )
        assert outside == 0
        if n_plots:
            # the bars keep their colour: presentation attributes, which the policy does not govern
            fills = page.evaluate(
                "[...document.querySelectorAll('.plot svg path')].map(p => getComputedStyle(p).fill)"
            )
            assert "rgb(76, 120, 168)" in fills
            plot_png = shot.with_name(shot.stem + "-plot.png")
            svgs.first.screenshot(path=str(plot_png))
            assert _blue_share(plot_png) > 0.02
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_result_pages_render_at_desktop_and_phone_width(
    site: str, browser: Any, shots: Path, width: int
) -> None:
    for name, (path, n_plots) in PAGES.items():
        _check_page(browser, site + path, width, n_plots, shots / f"{name}-{width}.png")


def test_the_filter_form_works_without_scripts(site: str, browser: Any, shots: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(site + "/alice/toy/leaderboard")
        page.select_option("form.filters select[name=owner]", "bob")
        page.click("form.filters button[type=submit]")
        page.wait_for_load_state()
        assert "owner=bob" in page.url
        ranked = page.locator("section.column table tbody tr")
        assert ranked.count() == 1 and "model-b" in ranked.first.inner_text()
        page.screenshot(path=str(shots / "filtered-390.png"), full_page=True)
        page.click("a.compare")
        page.wait_for_load_state()
        assert "compare=1" in page.url and "owner=bob" in page.url
        assert "All settings in one table: not a ranking." in page.inner_text("div.results")
        assert page.locator("div.board table").count() == 1
    finally:
        context.close()
