"""Results on the hub end to end, in real Chromium: a published environment, two runs of two
models pushed with the real command line (``verihub results push`` and ``verihub eval --push``),
re-verified by the hub's worker in the sandbox, then the environment's leaderboard and the
version's eval card looked at at 1280 px and at phone width (390 px).

Screenshots go to test-artifacts/hub/results-e2e/ (git-ignored). The bounty pages are walked
through every state in test_bounties_browser.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import serve_http  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "hub" / "results-e2e"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


@pytest.fixture
def live(hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]) -> Iterator[str]:
    """The hub with alice/arith 0.1.0 published and reviewed, served on loopback."""
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    hub.review()
    with serve_http(hub.client.app) as url:
        yield url


@pytest.fixture
def solver_model(arith_bundle: Any) -> Iterator[str]:
    """A loopback fake model that knows arith's answers (from the environment's own tasks) and
    gives them at three rates, so the pass-rate histogram has tasks at 0%, 50% and 100%: the
    k-th task's prompt is answered right always (k % 3 == 0), every other time (1) or never (2)."""
    import asyncio

    from hub.registry import load_environment
    from hub.run.fake_server import FakeChatServer

    config = json.loads((arith_bundle.bundle / "eval" / "config.json").read_text())
    tasks = load_environment("arith", **config["env_args"]).tasks(config["split"], seed=config["seed"])
    answers = {t.messages(None)[-1].content: (k, t.answer) for k, t in zip(range(200), tasks, strict=False)}
    asked: dict[str, int] = {}

    def respond(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        k, answer = answers.get(prompt, (2, None))
        n = asked[prompt] = asked.get(prompt, 0) + 1
        right = k % 3 == 0 or (k % 3 == 1 and n % 2 == 0)
        return f"Answer: {answer}" if right and answer is not None else "Answer: -1"

    ready, stop = threading.Event(), threading.Event()
    url: list[str] = []

    async def serve() -> None:
        async with FakeChatServer(responder=respond) as server:
            url.append(server.base_url)
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "the fake model did not start"
    try:
        yield url[0]
    finally:
        stop.set()
        thread.join(timeout=10)


def _watch(page: Any) -> list[str]:
    """Console errors (a style or script the page's policy refused) and failed loads of ``page``."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return errors


def verihub(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``verihub`` command line, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "hub", *args], env=env, capture_output=True, text=True, timeout=600
    )


def test_two_models_pushed_reverified_and_seen_in_chromium(
    hub: Any, live: str, solver_model: str, arith_bundle: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    from hub.registry.entrypoints import package_hash

    published = hub.client.get("/api/v1/envs/alice/arith/0.1.0").json()["content_hash"]
    if package_hash("arith") != published:
        pytest.skip("the installed arith is not the published wheel: `eval --push` would be refused")
    env = {**os.environ, "VERIHUB_CONFIG": str(tmp_path / "config.toml"), "NO_COLOR": "1"}
    env.pop("VERIHUB_HUB_TOKEN", None)
    login = verihub(env, "login", "--hub", live, "--token", hub.tokens["alice"])
    assert login.returncode == 0, login.stderr
    # model 1: the submission's smoke evaluation (the embedded model), pushed as it is
    smoke = tmp_path / "smoke"
    shutil.copytree(arith_bundle.bundle / "eval", smoke)
    pushed = verihub(env, "results", "push", str(smoke), "--public", "--label", "smoke test")
    assert pushed.returncode == 0, pushed.stderr
    assert "recorded, under alice, public" in pushed.stdout
    # model 2: evaluated now with the settings of the first, and pushed when it finishes; a model
    # that solves some tasks always, some half the time and some never fills the histogram
    config = json.loads((smoke / "config.json").read_text())
    args = ["-n", str(config["num_tasks"]), "-r", str(config["rollouts_per_task"])]
    if config["sampling"].get("max_tokens") is not None:
        args += ["--max-tokens", str(config["sampling"]["max_tokens"])]
    if config["sampling"].get("temperature") is not None:
        args += ["--temperature", str(config["sampling"]["temperature"])]
    second = tmp_path / "second"
    run = verihub(
        env, "eval", "arith", "-m", "fake-solver", "--base-url", solver_model, "--seed", str(config["seed"]),
        "--split", config["split"], *args, "--out", str(second), "--no-progress", "--push", "--public",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "model fake-solver): recorded, under alice, public" in run.stdout
    # the hub's worker re-grades a sample of each run with the version's grader, sandboxed
    assert hub.review() == 2
    runs = hub.client.get("/api/v1/envs/alice/arith/results").json()
    assert sorted(r["model"] for r in runs) == ["fake-solver", config["model"]]
    assert [r["verify_state"] for r in runs] == ["verified", "verified"], runs

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for width in (1280, 390):
                page = browser.new_page(viewport={"width": width, "height": 900})
                errors = _watch(page)
                page.goto(f"{live}/alice/arith")
                page.click("text=Leaderboard >> nth=-1")  # the environment's own link
                assert page.url.endswith("/alice/arith/leaderboard")
                body = page.inner_text("main")
                assert "fake-solver" in body and config["model"] in body
                assert page.locator("svg").first.is_visible()  # reward by model, with intervals
                page.screenshot(path=str(ARTIFACTS / f"leaderboard-{width}.png"), full_page=True)
                page.goto(f"{live}/alice/arith/v/0.1.0")
                card = page.inner_text("main")
                assert "fake-solver" in card and config["model"] in card
                assert card.count("re-graded: consistent") >= 2 and "smoke test" in card
                histograms = page.locator("svg")
                assert histograms.count() >= 2 and all(
                    (histograms.nth(i).bounding_box() or {"width": 0})["width"] > 100
                    for i in range(histograms.count())
                )
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 0, f"the card is {overflow}px wider than a {width}px window"
                page.screenshot(path=str(ARTIFACTS / f"card-{width}.png"), full_page=True)
                assert not errors, errors  # nothing the page's policy refused
                page.close()
        finally:
            browser.close()
