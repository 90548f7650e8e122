"""`verihub view`: the static run viewer, escaped and filterable, in headless Chromium.

Model text is hostile: the run below puts markup in a completion, a task id, a grader reason and
an error. With autoescaping turned off in the viewer's Jinja2 environment the `img` and `script`
assertions of test_the_viewer_in_chromium fail (checked with test_escaping_is_what_keeps_markup_inert).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest

from graders.grade import Grade
from hub.env.types import Message, Rollout, RolloutError, Timing, ToolCall
from hub.run import viewer
from hub.run.rundir import RunDir
from hub.run.viewer import write_view
from tests.conftest import make_config

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "viewer"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.title='pwned'\">"


def _run(path: Path) -> RunDir:
    rd = RunDir(path)
    rd.create(make_config(num_tasks=3, rollouts=2))
    rollouts = []
    for i in range(3):
        for j in range(2):
            task = f"t{i}" if i != 2 else f"t2{IMG}"
            text = f"{SCRIPT}Answer: {i + j}" if i == 0 else f"Answer: {i}"
            messages = [
                Message(role="user", content=f"What is {i} + 1?"),
                Message(role="assistant", content=text),
            ]
            passed = (i + j) % 2 == 0
            grade = Grade.correct(extracted=str(i + j)) if passed else Grade.incorrect(reason=f"wrong {IMG}")
            error = RolloutError(kind="model", message=f"HTTP 500 {SCRIPT}") if (i, j) == (1, 1) else None
            rollouts.append(
                Rollout(
                    task_id=task, rollout_index=j, messages=messages if error is None else messages[:1],
                    reward=None if error else grade.score, passed=passed and error is None,
                    grade=None if error else grade, error=error, timing=Timing(started_at=0.0, total_s=1.5),
                )
            )  # fmt: skip
    with rd.open_writer() as w:
        for r in rollouts:
            w.write(r)
    return rd


def test_page_is_written_and_escaped(tmp_path: Path) -> None:
    rd = _run(tmp_path / "run")
    page = write_view(rd.path)
    assert page == rd.path / "view.html"
    text = page.read_text()
    assert SCRIPT not in text and IMG not in text
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in text
    assert text.count("<script>") == 1  # the page's own filter script, allowed by hash in the CSP
    assert 'http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;' in text
    assert (
        text.count('data-status="passed"') == 2
        and text.count('data-status="failed"') == 3
        and text.count('data-status="errored"') == 1
    )


def test_escaping_is_what_keeps_markup_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The negative case: without autoescaping the hostile markup reaches the page."""
    plain = jinja2.Environment(loader=jinja2.PackageLoader("hub.run", "templates"), autoescape=False)
    monkeypatch.setattr(viewer, "_templates", lambda: plain)
    text = write_view(_run(tmp_path / "run").path).read_text()
    assert IMG in text and SCRIPT in text


def test_hostile_text_in_attributes_tool_calls_and_names_is_escaped(tmp_path: Path) -> None:
    """Quotes cannot close an attribute; tool names, arguments and tool roles are text too."""
    rd = RunDir(tmp_path / "run")
    rd.create(make_config(num_tasks=1, rollouts=1))
    breakout = 'x" onmouseover="alert(1)'
    call = ToolCall(id="c1", name=f"f{IMG}", arguments=f'{{"q": "{SCRIPT}"}}')
    messages = [
        Message(role="user", content="hi"),
        Message(role="assistant", content=None, tool_calls=(call,)),
        Message(role="tool", name=f"t{SCRIPT}", tool_call_id="c1", content="&amp; stays text"),
    ]
    with rd.open_writer() as w:
        w.write(Rollout(task_id=breakout, rollout_index=0, messages=messages, timing=Timing(started_at=0.0)))
    text = write_view(rd.path).read_text()
    assert breakout not in text and IMG not in text and SCRIPT not in text
    assert 'data-task="x&#34; onmouseover=&#34;alert(1)"' in text
    assert "&amp;amp; stays text" in text  # an entity the model wrote is shown, not decoded
    assert text.count("<script>") == 1 and "<img" not in text


def test_view_command_writes_without_opening(tmp_path: Path) -> None:
    rd = _run(tmp_path / "run")
    out = tmp_path / "page.html"
    result = subprocess.run(
        [sys.executable, "-m", "hub", "view", str(rd.path), "--out", str(out), "--no-open"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out) and out.read_text().startswith("<!DOCTYPE html>")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser test needs `pip install playwright` (it drives /usr/bin/chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.mark.browser
def test_the_viewer_in_chromium(browser: Any, tmp_path: Path) -> None:
    page_path = write_view(_run(tmp_path / "run").path)
    errors: list[str] = []
    remote: list[str] = []
    context = browser.new_context(viewport={"width": 1100, "height": 900})

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            remote.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        assert page.title() == "toy @ fake"
        assert page.locator("img").count() == 0 and page.locator("main script").count() == 0
        arts = page.locator("article")
        assert arts.count() == 6
        assert page.locator("#count").inner_text() == "6 of 6 shown"
        first = arts.nth(0)
        assert SCRIPT in first.locator("pre").nth(1).inner_text()  # shown as text, verbatim
        assert "extracted answer" in first.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "all.png"), full_page=True)
        for status, n in (("failed", 3), ("errored", 1), ("passed", 2)):
            page.click(f"nav button[data-filter={status}]")
            assert page.locator(f"article.{status}:visible").count() == n
            assert page.locator("article:visible").count() == n
            assert page.locator("#count").inner_text() == f"{n} of 6 shown"
        page.click("nav button[data-filter=failed]")
        page.screenshot(path=str(ARTIFACTS / "failed.png"), full_page=True)
        page.click("nav button[data-filter=all]")
        page.fill("#task", "t2<img")
        assert page.locator("article:visible").count() == 2
        assert errors == [] and remote == []
        assert page.title() != "pwned"
    finally:
        context.close()
