"""The model client against a real loopback HTTP server with injected faults."""

from __future__ import annotations

import asyncio
import time

import pytest

from hub.env.errors import ModelError, ModelUnreachableError, UsageError
from hub.env.types import Message, Sampling
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer

MSGS = [Message(role="user", content="What is 1 + 1?")]


def opts(url: str, **kw: object) -> ClientOptions:
    base: dict[str, object] = dict(base_url=url, model="fake", backoff_base_s=0.01, backoff_max_s=0.05)
    base.update(kw)
    return ClientOptions(**base)  # type: ignore[arg-type]


async def test_completion_and_usage() -> None:
    async with FakeChatServer() as srv, OpenAIClient(opts(srv.base_url)) as client:
        c = await client.chat(MSGS, sampling=Sampling(max_tokens=8, temperature=0.0, stop=("\n",)), seed=3)
        assert c.message.role == "assistant" and c.message.content == "Answer: 42"
        assert c.usage.prompt_tokens == 10 and c.usage.completion_tokens == 3
        assert client.usage.total_tokens == 13


@pytest.mark.parametrize("fault", ["429", "500", "malformed", "drop"])
async def test_transient_faults_are_retried(fault: str) -> None:
    async with (
        FakeChatServer(schedule=[fault, fault, "ok"]) as srv,
        OpenAIClient(opts(srv.base_url)) as client,
    ):
        c = await client.chat(MSGS, sampling=Sampling())
        assert c.attempts == 3 and c.message.content == "Answer: 42"
        assert srv.requests == 3


async def test_retry_after_is_honoured() -> None:
    async with FakeChatServer(schedule=["429", "ok"], retry_after_s=0.4) as srv:
        async with OpenAIClient(opts(srv.base_url)) as client:
            t0 = time.perf_counter()
            await client.chat(MSGS, sampling=Sampling())
            assert time.perf_counter() - t0 >= 0.4


@pytest.mark.slow
async def test_slow_answer_times_out_then_succeeds() -> None:
    async with FakeChatServer(schedule=["slow", "ok"], slow_s=2.0) as srv:
        async with OpenAIClient(opts(srv.base_url, timeout_s=0.3)) as client:
            c = await client.chat(MSGS, sampling=Sampling())
            assert c.attempts == 2


async def test_gives_up_after_max_retries() -> None:
    async with (
        FakeChatServer(schedule=["500"]) as srv,
        OpenAIClient(opts(srv.base_url, max_retries=2)) as client,
    ):
        with pytest.raises(ModelError, match="gave up after 3 attempts"):
            await client.chat(MSGS, sampling=Sampling())
        assert srv.requests == 3


async def test_client_errors_are_not_retried() -> None:
    from aiohttp import web

    async def unauthorized(request: web.Request) -> web.Response:
        return web.Response(status=401, text="bad key")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", unauthorized)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with OpenAIClient(opts(f"http://127.0.0.1:{port}/v1")) as client:
            with pytest.raises(ModelError, match="API key"):
                await client.chat(MSGS, sampling=Sampling())
            assert client.n_retries == 0
    finally:
        await runner.cleanup()


async def test_unreachable_endpoint_fails_fast() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    async with OpenAIClient(opts(f"http://127.0.0.1:{port}/v1")) as client:
        with pytest.raises(ModelUnreachableError, match="cannot reach"):
            await client.probe()


def test_bad_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not an http"):
        ClientOptions(base_url="localhost:8000", model="m")


@pytest.mark.slow
async def test_request_rate_limit() -> None:
    # 600/minute = 10/s with a burst of at most 10: 25 requests need at least ~1.5 s.
    async with FakeChatServer() as srv, OpenAIClient(opts(srv.base_url, requests_per_minute=600)) as client:
        import asyncio

        t0 = time.perf_counter()
        await asyncio.gather(*(client.chat(MSGS, sampling=Sampling()) for _ in range(25)))
        assert time.perf_counter() - t0 >= 1.3
        assert srv.requests == 25


async def test_in_flight_cap() -> None:
    import asyncio

    async with FakeChatServer(schedule=["slow"], slow_s=0.2) as srv:
        async with OpenAIClient(opts(srv.base_url, max_in_flight=2)) as client:
            t0 = time.perf_counter()
            await asyncio.gather(*(client.chat(MSGS, sampling=Sampling()) for _ in range(4)))
            # 4 requests of 0.2 s, 2 at a time: at least 0.4 s
            assert time.perf_counter() - t0 >= 0.38


async def test_token_rate_limit_holds_requests_once_the_budget_is_spent() -> None:
    """1,000 tokens/minute and ~620 estimated tokens per request: the first goes at once, the
    next ones wait on the limiter (for about 14 s: far longer than the test looks)."""
    import asyncio

    async with FakeChatServer() as srv, OpenAIClient(opts(srv.base_url, tokens_per_minute=1000)) as client:
        calls = [
            asyncio.ensure_future(client.chat(MSGS, sampling=Sampling(max_tokens=600))) for _ in range(3)
        ]
        done, pending = await asyncio.wait(calls, timeout=1.0)
        try:
            assert len(done) == 1 and len(pending) == 2
            assert srv.requests == 1  # the others never reached the server
            assert client._tpm is not None and not client._tpm.has_capacity(600)
        finally:
            for c in pending:
                c.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


async def test_token_rate_limit_lets_an_oversized_request_through() -> None:
    """A request estimated above the whole per-minute budget still runs (it takes the budget)."""
    async with FakeChatServer() as srv, OpenAIClient(opts(srv.base_url, tokens_per_minute=100)) as client:
        c = await asyncio.wait_for(client.chat(MSGS, sampling=Sampling(max_tokens=5000)), 60)
        assert c.message.content == "Answer: 42"


async def test_probe_catches_a_base_url_without_v1() -> None:
    from hub.env.errors import ModelConfigError

    async with FakeChatServer() as srv:
        root = srv.base_url.removesuffix("/v1")
        async with OpenAIClient(opts(root)) as client:
            with pytest.raises(ModelConfigError, match=f"HTTP 404 .*try --base-url {root}/v1$"):
                await client.probe()
        async with OpenAIClient(opts(srv.base_url)) as client:
            await client.probe()
        assert srv.requests == 0  # a right URL is probed through /models alone: no completion asked
