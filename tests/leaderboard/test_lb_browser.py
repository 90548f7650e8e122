"""The built site in a real browser: headless Chromium (Debian's) driven by Playwright.

Pages are opened from file:// with every network request blocked; the test fails on any console
error, uncaught page error, or request that is not for a local file. Every page is also shot at
1280 px and at phone width (390 px), and the layout is checked: no sideways scrolling of the page,
the heading, the first table and the plots visible and wide enough to read. Screenshots go to
test-artifacts/leaderboard/ (git-ignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leaderboard import Board, build_site
from leaderboard.site import card_page_name, env_page_name
from leaderboard.testing import write_run

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "leaderboard"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

HOSTILE_MODEL = "<img src=x onerror=\"document.title='pwned'\">"
HOSTILE_COMPLETION = "<script>document.title='pwned'</script>Answer: 42"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    board = Board(tmp / "board")
    board.add(write_run(tmp / "a", model="alpha", rewards=((1.0, 1.0), (1.0, 0.0), (0.0, 1.0))))
    board.add(write_run(tmp / "b", model="beta", rewards=((0.0, 0.0), (1.0, 0.0), (0.0, 0.0))))
    board.add(
        write_run(
            tmp / "c",
            model=HOSTILE_MODEL,
            completion=HOSTILE_COMPLETION,
            rewards=((1.0, 0.0), (0.0, 0.0), (1.0, 0.0)),
        ),
        copy_rollouts=True,
    )
    board.add(write_run(tmp / "d", env_version="0.9.0", model="legacy"))
    board.add(write_run(tmp / "e", env_id="second", model="alpha"))
    out = tmp / "site"
    build_site(board, out)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # not a skip: only a missing browser is
        pytest.fail("the browser test needs `pip install playwright` (it drives /usr/bin/chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Visit:
    """A page opened in a fresh context that records console errors and non-file requests."""

    def __init__(self, browser: Any, path: Path, width: int = 1200) -> None:
        self.errors: list[str] = []
        self.remote: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")

    def _route(self, route: Any) -> None:
        url: str = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            self.remote.append(url)
            route.abort()

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()


def _clean(visit: Visit) -> None:
    assert visit.errors == [], visit.errors
    assert visit.remote == [], visit.remote
    assert visit.page.title() != "pwned"


def test_index_page(browser: Any, site: Path) -> None:
    v = Visit(browser, site / "index.html")
    try:
        _clean(v)
        assert v.page.title() == "Leaderboard"
        rows = v.page.locator("table").first.locator("tbody tr")
        assert rows.count() == 2
        cross = v.page.locator("table").nth(1)  # models across environments: alpha ran both
        assert cross.locator("tbody tr").first.locator("td").first.inner_text() == "alpha"
        assert rows.nth(0).locator("td").nth(0).inner_text() == "second"
        toy = rows.nth(1).locator("td")
        assert toy.nth(0).inner_text() == "toy"
        assert toy.nth(2).inner_text() == "3"  # runs of the current version
        assert toy.nth(6).inner_text() == "1"  # stale runs
        assert v.screenshot("index.png").stat().st_size > 1000
        # following a link works from file://
        v.page.click("text=toy")
        v.page.wait_for_load_state("load")
        assert v.page.url.endswith("/env/" + env_page_name("toy"))
        _clean(v)
    finally:
        v.close()


def test_environment_page(browser: Any, site: Path) -> None:
    v = Visit(browser, site / "env" / env_page_name("toy"))
    try:
        _clean(v)
        sections = v.page.locator("section")
        assert sections.count() == 2
        current, stale = sections.nth(0), sections.nth(1)
        models = current.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert models == ["alpha", HOSTILE_MODEL, "beta"]  # ranked by mean reward, text shown verbatim
        assert current.locator("img").count() == 0  # the hostile <img> stayed text
        assert "stale" in stale.locator("h2").inner_text()
        assert stale.locator("tbody tr").count() == 1
        svgs = v.page.locator(".plot svg")
        assert svgs.count() == 6
        for i in range(svgs.count()):
            box = svgs.nth(i).bounding_box()
            assert box is not None and box["width"] > 200 and box["height"] > 100
        assert v.screenshot("env-toy.png").stat().st_size > 1000
    finally:
        v.close()


def test_run_page_transcripts_are_browsable(browser: Any, site: Path) -> None:
    env_page = Visit(browser, site / "env" / env_page_name("toy"))
    try:
        env_page.page.locator("section").nth(0).locator("tbody tr td:nth-child(2) a").nth(1).click()
        env_page.page.wait_for_load_state("load")
        _clean(env_page)
        page = env_page.page
        details = page.locator("details")
        assert details.count() == 3  # the first rollout of each of its three tasks
        details.nth(0).locator("summary").click()
        assert HOSTILE_COMPLETION in details.nth(0).inner_text()
        assert page.locator("details script").count() == 0
        env_page.screenshot("run.png")
        _clean(env_page)
    finally:
        env_page.close()


def _page_path(site: Path, name: str) -> Path:
    return {
        "index": site / "index.html",
        "env": site / "env" / env_page_name("toy"),
        "card": site / "card" / card_page_name("toy", "1.0.0"),
        "run": next((site / "run").glob("toy-1.0.0-img*.html")),
    }[name]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", ["index", "env", "card", "run"])
def test_pages_are_readable_at_desktop_and_phone_width(
    browser: Any, site: Path, name: str, width: int
) -> None:
    """Layout facts, from the screenshots looked at while building: the page never scrolls sideways
    (wide tables scroll inside their own box), the title and first table are on screen, table text
    is not squeezed to a letter per line, and every plot is drawn at a readable width."""
    v = Visit(browser, _page_path(site, name), width=width)
    try:
        _clean(v)
        page = v.page
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("h1").is_visible()
        first_table = page.locator("table").first
        assert first_table.is_visible()
        # a header cell is at least as wide as its longest word: no one-letter-per-line columns
        narrowest = page.evaluate(
            "Math.min(...[...document.querySelectorAll('th')].map(th => th.getBoundingClientRect().width))"
        )
        assert narrowest >= 18
        svgs = page.locator(".plot svg")
        for i in range(svgs.count()):
            box = svgs.nth(i).bounding_box()
            assert box is not None and box["width"] >= min(300, width - 60) and box["height"] > 100
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1
        if name in ("env", "card"):
            assert svgs.count() >= 3
        if name == "card":
            assert page.get_by_text("Difficulty and the learnable band").is_visible()
            assert page.locator("a", has_text="calibration.json").count() == 3
        assert v.screenshot(f"{name}-{width}.png").stat().st_size > 1000
    finally:
        v.close()
