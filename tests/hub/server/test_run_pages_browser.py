"""The run pages in a real browser (Chromium through Playwright) at 1280 and 390 px: a run page
with a label column, a rollout page with hostile content, a 1 MB message, a label, a corrected
copy and (signed in as a reviewer) the label and correction forms, and a task across runs render
under the page policy with no console error and never scroll sideways; the rollout filters and
the label form work with scripts off. Screenshots as in ``test_result_pages_browser``
(``VERIHUB_SCREENSHOTS=DIR``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import PASSWORD  # noqa: E402
from labels_kit import FakeGrader, post, post_label, transcript  # noqa: E402
from results_seed import seed  # noqa: E402
from serving import serve_http  # noqa: E402
from test_result_pages_browser import ARGS, CHROMIUM, _check_page  # noqa: E402
from test_run_pages import push  # noqa: E402

from hub.server.accounts.passwords import set_password  # noqa: E402
from hub.server.accounts.users import add_user  # noqa: E402
from hub.server.admin import open_hub  # noqa: E402
from hub.server.core.models import EnvFile, Run  # noqa: E402
from hub.server.results.rollout_store import backfill  # noqa: E402

HOSTILE_NOTE = "<b>bold?</b> \u202eevil <script>alert(1)</script>"

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
    with open_hub(hub.config) as s:
        add_user(s, "rita", reviewer=True)
        set_password(s, "rita", PASSWORD)
    storage = hub.client.app.state.storage
    with hub.sessions()() as s, s.begin():  # a wheel row for the fake grader (never opened)
        version_id = s.query(Run).filter_by(public_id=run).one().version_id
        f = EnvFile(version_id=version_id, kind="wheel", filename="toy-1.0.0-py3-none-any.whl")
        f.sha256, f.size = storage.put_bytes(b"not a wheel"), 11
        s.add(f)
    hub.client.app.state.grade_correction = FakeGrader()
    assert post_label(hub, "alice", run, hostile, "unclear", "first look").status_code == 201
    assert post_label(hub, "alice", run, hostile, "reward_hack", HOSTILE_NOTE).status_code == 201
    assert post_label(hub, "alice", run, hostile + 1, "correct").status_code == 201
    messages = transcript(hub, run, hostile)
    messages[-1]["content"] = "Checked by hand.\nAnswer: 42"
    r = post(hub, "alice", run, hostile, {"messages": messages, "note": "the <i>right</i> answer"})
    assert r.status_code == 201, r.text
    with serve_http(hub.client.app) as url:
        yield url, run, hostile


class _SignedIn:
    """A browser whose new contexts carry a reviewer's session (``_check_page`` makes its own)."""

    def __init__(self, browser: Any, url: str, name: str = "rita") -> None:
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{url}/sign-in")
        page.fill("input[name=name]", name)
        page.fill("input[name=password]", PASSWORD)
        page.click("form.account button[type=submit]")
        page.wait_for_load_state()
        self.state = context.storage_state()
        context.close()
        self.browser = browser

    def new_context(self, **kwargs: Any) -> Any:
        return self.browser.new_context(storage_state=self.state, **kwargs)


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
    reviewer = _SignedIn(browser, url)
    for name, path in {"run-labelled": f"/runs/{run}?label=any", "rollout-forms": pages["rollout"]}.items():
        _check_page(reviewer, url + path, width, 0, shots / f"run-pages-{name}-{width}.png")


def test_the_label_form_works_without_scripts(site: tuple[str, str, int], browser: Any, shots: Path) -> None:
    url, run, hostile = site
    context = _SignedIn(browser, url).new_context(
        viewport={"width": 390, "height": 900}, java_script_enabled=False
    )
    page = context.new_page()
    try:
        page.goto(f"{url}/runs/{run}/rollouts/{hostile}")
        assert page.locator(".label-current").inner_text().startswith("reward hack")
        assert page.locator("pre.note-text").inner_text().startswith("<b>bold?</b>")  # text, not markup
        assert page.locator("pre.note-text b").count() == 0
        page.check("form.label-form input[value=correct]")
        page.fill("form.label-form textarea[name=note]", "re-read: the answer is right")
        page.click("form.label-form button[type=submit]")
        page.wait_for_load_state()
        assert page.url.endswith(f"/rollouts/{hostile}#labels")
        assert page.locator(".label-current").inner_text().startswith("correct")
        page.locator("details.correct summary").click()
        page.screenshot(path=str(shots / "run-pages-labelled-390.png"), full_page=True)
        page.goto(f"{url}/runs/{run}?label=correct")
        rows = page.locator("table.rollouts tbody tr")
        assert rows.count() == 2 and "correct" in rows.nth(0).inner_text()
    finally:
        context.close()


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
