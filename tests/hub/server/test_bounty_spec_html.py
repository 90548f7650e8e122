"""A bounty's specification is rendered and sanitised once, when it is saved: the page shows the
stored HTML and renders nothing per request; a bounty saved before the column existed is
rendered on its first view and the result kept."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from hub.server.core.models import Bounty

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounty_kit import BountyHub, open_bounty_hub  # noqa: E402

HOSTILE = "<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)> **fine**"


@pytest.fixture
def bounty_hub(tmp_path: Path) -> Iterator[BountyHub]:
    with open_bounty_hub(tmp_path) as h:
        yield h


def _stored(h: BountyHub, bid: int) -> str:
    with h.client.app.state.sessions() as s:
        bounty = s.get(Bounty, bid)
        assert bounty is not None
        return str(bounty.spec_html)


def _set(h: BountyHub, bid: int, html: str) -> None:
    with h.client.app.state.sessions() as s, s.begin():
        s.execute(update(Bounty).where(Bounty.id == bid).values(spec_html=html))


def _no_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_text: str) -> Any:
        raise AssertionError("rendered per request")

    monkeypatch.setattr("hub.server.bounties.workflow.render_markdown", refuse)


def test_the_spec_is_rendered_and_sanitised_when_saved(
    bounty_hub: BountyHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = bounty_hub
    bid = int(h.create(title="Hostile", spec=HOSTILE).json()["id"])
    html = _stored(h, bid)
    assert "<strong>fine</strong>" in html
    assert "&lt;script&gt;" in html  # raw HTML is shown as text, never as markup
    for bad in ("<script", 'href="javascript', "<img"):
        assert bad not in html, html
    assert re.search(r"<[^>]*\son\w+=", html) is None, html  # no event handler on any tag
    _no_rendering(monkeypatch)
    page = h.client.get(f"/bounties/{bid}")
    assert page.status_code == 200 and html in page.text
    _set(h, bid, "<p>the stored rendering</p>")  # what is shown is what was stored
    assert "<p>the stored rendering</p>" in h.client.get(f"/bounties/{bid}").text


def test_an_older_bounty_is_rendered_on_first_view_and_kept(
    bounty_hub: BountyHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = bounty_hub
    bid = int(h.create(title="Older", spec=HOSTILE).json()["id"])
    fresh = _stored(h, bid)
    _set(h, bid, "")  # as the migration leaves a bounty saved before the column existed
    first = h.client.get(f"/bounties/{bid}")
    assert first.status_code == 200 and "<strong>fine</strong>" in first.text and "<script" not in first.text
    assert _stored(h, bid) == fresh
    _no_rendering(monkeypatch)
    assert fresh in h.client.get(f"/bounties/{bid}").text
