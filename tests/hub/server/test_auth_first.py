"""Work done only after asking who is asking: bodies are read after authentication and under
their cap, READMEs are rendered once at publish, pages describe the newest reviewed version, and
the failed-auth limiter counts the socket's peer (forwarded addresses only from named proxies)
and the token's id."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.server.core.models import PASSED, EnvFile, Environment, Version

REPO = Path(__file__).resolve().parents[3]


class _Counting:
    """An ASGI wrapper counting the request-body bytes the application pulled."""

    def __init__(self, app: Any) -> None:
        self.app, self.read = app, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def counted() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                self.read += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


@pytest.fixture
def counted(
    tmp_path: Path, tokens_for: Callable[[Any], dict[str, str]]
) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig

    config = HubConfig(data=tmp_path / "hub")
    tokens = tokens_for(config)
    wrapper = _Counting(create_app(config))
    with TestClient(wrapper) as client:
        yield client, wrapper, tokens


def test_bounty_writes_authenticate_before_reading_the_body(counted: tuple[Any, Any, dict[str, str]]) -> None:
    client, wrapper, tokens = counted
    big = b'{"title": "' + b"x" * (1024 * 1024) + b'"}'
    for path in ("/api/v1/bounties", "/api/v1/bounties/1/claim"):
        r = client.post(path, content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 401, r.text
        bad = client.post(path, content=big, headers={"Authorization": "Bearer vh_000000000000_" + "A" * 43})
        assert bad.status_code == 401
    assert wrapper.read == 0, "an unauthenticated body was read"
    r = client.post("/api/v1/bounties", content=big, headers={"Authorization": f"Bearer {tokens['alice']}"})
    assert r.status_code == 413, r.text
    assert wrapper.read == 0, "a body declared over the cap was read"


def _described_env(hub: Any) -> None:
    with hub.sessions()() as s, s.begin():
        from hub.server.accounts.users import get_owner

        owner = get_owner(s, "alice")
        assert owner is not None
        env = Environment(owner_id=owner.id, env_id="doc", distribution="doc", project="doc", summary="good")
        v = Version(
            environment=env,
            version="1.0",
            manifest_sha256="0" * 64,
            content_hash="0" * 64,
            readme="# raw *markdown*",
            readme_html="<p>rendered at publish</p>",
        )
        v.state = PASSED
        s.add_all(
            [
                env,
                v,
                EnvFile(
                    version=v, kind="wheel", filename="doc-1.0-py3-none-any.whl", sha256="1" * 64, size=1
                ),
            ]
        )


def test_pages_never_render_markdown_per_request(hub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import markdown_it

    _described_env(hub)

    def refuse(*_a: Any, **_k: Any) -> str:
        raise AssertionError("Markdown rendered while serving a page")

    monkeypatch.setattr(markdown_it.MarkdownIt, "render", refuse)
    for _ in range(3):
        page = hub.client.get("/alice/doc")
        assert page.status_code == 200 and "rendered at publish" in page.text


def test_a_readme_is_rendered_under_its_cap() -> None:
    from hub.server.web.markdown import MAX_README_BYTES, render_readme

    html = render_readme("*a _b " * (MAX_README_BYTES // 3))
    assert "README cut at" in html and len(html) < 4 * MAX_README_BYTES


@pytest.mark.slow
def test_pages_describe_the_newest_reviewed_version(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], variant: Callable[..., Path]
) -> None:
    from hub.server.reviews.jobs import claim, finish

    def review_passes() -> None:
        job = claim(hub.sessions(), "test", 30.0)
        assert job is not None
        assert finish(hub.sessions(), job, "test", passed=True, report={"passed": True})

    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    review_passes()
    before = hub.client.get("/alice/arith").text
    r = hub.push(variant(arith_bundle, version="0.2.0", summary="Evil summary", readme="# EVIL README\n"))
    assert r.status_code == 201, r.text
    shown = hub.client.get("/alice/arith").text + hub.client.get("/api/v1/envs/alice/arith").text
    assert "Evil summary" not in shown and "EVIL README" not in shown
    assert "EVIL README" not in before
    review_passes()
    shown = hub.client.get("/alice/arith").text + hub.client.get("/api/v1/envs/alice/arith").text
    assert "Evil summary" in shown and "EVIL README" in shown


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serving(data: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "hub", "hub", "serve", "--data", str(data), "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--no-review-worker", *extra], env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(base + "/simple/", timeout=5)
            return proc, base
        except httpx.TransportError:
            assert proc.poll() is None and time.monotonic() < deadline, "the hub did not start"
            time.sleep(0.3)


def _statuses(base: str, n: int, *, token: Callable[[int], str]) -> list[int]:
    return [
        httpx.get(
            base + "/api/v1/whoami",
            headers={"Authorization": f"Bearer {token(i)}", "X-Forwarded-For": f"203.0.113.{i}"},
            timeout=30,
        ).status_code
        for i in range(n)
    ]


@pytest.mark.slow
def test_the_failed_auth_limiter_ignores_forged_forwarded_addresses(tmp_path: Path) -> None:
    """Rotating X-Forwarded-For must not escape the limit unless the proxy is named."""
    random_ids = lambda i: f"vh_{i:012x}_{'A' * 43}"  # noqa: E731
    one_id = lambda i: f"vh_{'ab' * 6}_{chr(65 + i) * 43}"  # noqa: E731
    proc, base = _serving(tmp_path / "hub")
    try:
        assert _statuses(base, 12, token=random_ids)[-1] == 429  # the peer address is counted
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    proc, base = _serving(tmp_path / "hub", "--forwarded-allow-ips", "127.0.0.1")
    try:
        assert 429 not in _statuses(base, 12, token=random_ids)  # a named proxy: addresses believed
        assert _statuses(base, 12, token=one_id)[-1] == 429  # one token's id is counted too
    finally:
        proc.terminate()
        proc.wait(timeout=30)
