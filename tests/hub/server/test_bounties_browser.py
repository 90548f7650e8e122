"""The bounty pages in a real browser (Debian's Chromium through Playwright), at 1280 and 390 px:
one bounty walks through every state (moves through the API), and after each move the bounty
page shows the new state, its history and nothing wider than the screen. A private version reads
"a private version" to others. Screenshots go to test-artifacts/hub/bounties/ (git-ignored).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounty_kit import BountyHub, open_bounty_hub, serve_http  # noqa: E402

from hub.server.core.models import utcnow  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "hub" / "bounties"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
WIDTHS = {"wide": 1280, "narrow": 390}
SPEC = """Build an environment whose grader **executes** SQL answers against a fixture database.

- at least 200 tasks, with gold answers
- a `hacking_probes` pass: no answer that ignores the question may score

| part | weight |
|------|--------|
| grader | 60% |
| tasks | 40% |
"""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[BountyHub, str]]:
    with open_bounty_hub(tmp_path) as h, serve_http(h.client.app) as url:
        yield h, url


@pytest.fixture
def pages() -> Iterator[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        out = {}
        for name, width in WIDTHS.items():
            pg = browser.new_context(viewport={"width": width, "height": 900}).new_page()
            pg.errors = []
            pg.on("pageerror", lambda e, pg=pg: pg.errors.append(str(e)))
            out[name] = pg
        try:
            yield out
        finally:
            browser.close()


def look(pages: dict[str, Any], url: str, shot: str, state_label: str) -> None:
    """Open ``url`` at both widths, check the state shown and that nothing overflows, screenshot."""
    for name, pg in pages.items():
        pg.goto(url)
        assert pg.inner_text("#state") == state_label
        overflow = pg.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{shot} at {name}: {overflow}px wider than the screen"
        pg.screenshot(path=str(ARTIFACTS / f"{shot}-{name}.png"), full_page=True)
        assert pg.errors == []


def test_a_bounty_walks_through_every_state(site: tuple[BountyHub, str], pages: dict[str, Any]) -> None:
    h, base = site
    deadline = (utcnow() + dt.timedelta(days=20)).isoformat() + "Z"
    bid = h.create(title="SQL grader with a fixture database", spec=SPEC, reward="500 EUR", deadline=deadline)
    bid = int(bid.json()["id"])
    url = f"{base}/bounties/{bid}"
    h.version("alice/sqlgrade@0.1.0", "queued")
    h.version("alice/sqlgrade@0.2.0", "passed")
    h.version("alice/sqlgrade@0.3.0", "passed")
    look(pages, url, "01-open", "open")
    assert pages["wide"].locator("section.spec table td").first.inner_text() == "grader"
    assert h.act("alice", bid, "claim").status_code == 200
    look(pages, url, "02-claimed", "claimed")
    assert "the claim expires" in pages["narrow"].inner_text("#claimant")
    h.act("alice", bid, "submit", ref="alice/sqlgrade@0.1.0")
    look(pages, url, "03-submitted", "submitted")
    assert "automatic review: queued" in pages["wide"].inner_text("#submission")
    h.review_done("alice/sqlgrade@0.1.0", "failed")
    look(pages, url, "04-review-failed", "automatic review failed")
    h.act("alice", bid, "submit", ref="alice/sqlgrade@0.2.0")
    look(pages, url, "05-review-passed", "automatic review passed")
    h.act("rita", bid, "review")
    look(pages, url, "06-under-review", "under human review")
    h.act("rita", bid, "reject", note="The grader accepts `SELECT *` for every question; see probe 3.")
    look(pages, url, "07-rejected", "rejected")
    assert "rejected by rita" in pages["narrow"].inner_text("#decision")
    h.act("alice", bid, "submit", ref="alice/sqlgrade@0.3.0")
    h.act("root", bid, "review")
    h.act("rita", bid, "accept", note="Probes pass; the fixture database is small and documented.")
    look(pages, url, "08-accepted", "accepted")
    assert "small and documented" in pages["wide"].inner_text("#decision")
    assert "payout is not recorded yet" in pages["wide"].content()
    h.act("rita", bid, "payout", reference="SEPA transfer 2026-11-0042")
    look(pages, url, "09-paid", "accepted")
    history = pages["narrow"].inner_text("ol.events")
    for text in ("rita", "alice", "the hub", "review_failed", "SEPA transfer 2026-11-0042", "see probe 3"):
        assert text in history
    assert pages["wide"].locator("ol.events li").count() == 13
    assert "SEPA transfer 2026-11-0042" in pages["wide"].inner_text("section.payout")
    assert "payout" not in h.get(bid)["actions"] and pages["wide"].locator("pre.install").count() == 0
    for name, pg in pages.items():
        pg.goto(f"{base}/bounties")
        pg.screenshot(path=str(ARTIFACTS / f"10-board-{name}.png"), full_page=True)
        pg.click("nav.states a:text('accepted')")
        assert pg.locator("ul.bounties li").count() == 1
        pg.click("ul.bounties a.env")
        assert pg.url == url


def test_expiry_reopening_and_a_private_version(site: tuple[BountyHub, str], pages: dict[str, Any]) -> None:
    h, base = site
    bid = int(h.create(title="Long title " * 12, spec=SPEC, claim_days=1).json()["id"])
    url = f"{base}/bounties/{bid}"
    h.act("bob", bid, "claim")
    h.shift(bid, claim_expires_at=utcnow() - dt.timedelta(minutes=1))
    look(pages, url, "11-expired", "open")
    assert "the claim of bob expired" in pages["wide"].inner_text("ol.events")
    h.act("alice", bid, "claim")
    h.version("lab/hiddenenv@1.0", "failed", private=True)
    h.act("alice", bid, "submit", ref="lab/hiddenenv@1.0")
    look(pages, url, "12-private-version", "automatic review failed")  # anonymous browsers
    assert "a private version" in pages["narrow"].inner_text("#submission")
    assert "hiddenenv" not in pages["narrow"].content()
    h.act("rita", bid, "reopen", note="The claimant went quiet; open to others.")
    look(pages, url, "13-reopened", "open")
    assert pages["wide"].inner_text("#claimant") == "nobody"
