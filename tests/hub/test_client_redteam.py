"""Red-team tests: the client and the runner against a hostile or broken server.

Each server here is a real loopback HTTP server (aiohttp, or raw asyncio for byte-level faults).
Every test is bounded in time and size.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from graders.exact import ExactGrader
from hub import SingleTurnEnv
from hub.env.errors import ModelError
from hub.env.types import Message, Rollout, Sampling, Timing
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunDir
from hub.run.runner import Runner
from tests.conftest import make_config, make_tasks

MSGS = [Message(role="user", content="hi")]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def opts(url: str, **kw: Any) -> ClientOptions:
    base: dict[str, Any] = dict(
        base_url=url, model="m", timeout_s=2.0, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02
    )
    base.update(kw)
    return ClientOptions(**base)


@asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[str]:
    """An aiohttp server answering chat completions with ``handler``; yields its base URL."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def body(message: dict[str, Any], **top: Any) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "finish_reason": "stop", "message": message}], **top}
    ).encode()


def replying(raw: bytes, status: int = 200) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=status, body=raw, content_type="application/json")

    return handler


async def chat_once(raw: bytes, **kw: Any) -> Any:
    async with serving(replying(raw)) as url, OpenAIClient(opts(url, **kw)) as client:
        return await client.chat(MSGS, sampling=Sampling())


# -- hostile bodies ------------------------------------------------------------------------------
async def test_lone_surrogates_are_replaced_so_the_answer_can_be_saved() -> None:
    raw = (
        b'{"choices":[{"message":{"role":"assistant","content":"a\\ud800b\\u0000c","tool_calls":'
        b'[{"id":"x\\udfff","function":{"name":"f\\ud800","arguments":"{\\"a\\": \\"\\ud800\\"}"}}]}}]}'
    )
    c = await chat_once(raw)
    assert c.message.content == "a\ufffdb\x00c"  # NUL is valid text and kept
    call = c.message.tool_calls[0]
    assert (call.id, call.name) == ("x\ufffd", "f\ufffd") and "\ud800" not in call.arguments
    c.message.model_dump_json().encode()  # would raise on a surrogate


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": -7},
        {"prompt_tokens": "abc", "completion_tokens": [1]},
        {"prompt_tokens": 10**40, "completion_tokens": 1e300},
        {"prompt_tokens": True, "completion_tokens": {"n": 1}},
        "not a mapping",
    ],
)
async def test_garbage_usage_is_recorded_as_zero_and_keeps_the_answer(usage: object) -> None:
    c = await chat_once(body({"role": "assistant", "content": "x"}, usage=usage), max_retries=0)
    assert c.message.content == "x"
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (0, 0)


async def test_plausible_usage_as_strings_or_floats_is_kept() -> None:
    c = await chat_once(
        body({"role": "assistant", "content": "x"}, usage={"prompt_tokens": "12", "completion_tokens": 3.0})
    )
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (12, 3)


async def test_infinite_usage_is_not_an_overflow_crash() -> None:
    raw = (
        b'{"choices":[{"message":{"role":"assistant","content":"x"}}],'
        b'"usage":{"prompt_tokens":Infinity,"completion_tokens":NaN}}'
    )
    c = await chat_once(raw, max_retries=0)
    assert c.message.content == "x" and c.usage.total_tokens == 0


async def test_absurdly_nested_json_is_a_model_error_not_a_recursion_error() -> None:
    raw = b'{"choices":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ModelError, match="malformed completion"):
        await chat_once(raw)


async def test_tool_arguments_sent_as_an_object_become_json() -> None:
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": {"a": 1}}}],
    }
    c = await chat_once(body(msg))
    assert json.loads(c.message.tool_calls[0].arguments) == {"a": 1}


async def test_content_parts_are_joined_and_other_content_types_refused() -> None:
    parts = [{"type": "text", "text": "Answer: "}, {"type": "text", "text": "42"}]
    c = await chat_once(body({"role": "assistant", "content": parts}))
    assert c.message.content == "Answer: 42"
    for bad in (5, {"text": "x"}, [{"type": "image_url", "image_url": {"url": "x"}}]):
        with pytest.raises(ModelError, match="malformed completion"):
            await chat_once(body({"role": "assistant", "content": bad}))


async def test_a_non_string_finish_reason_is_dropped() -> None:
    c = await chat_once(json.dumps({"choices": [{"finish_reason": 5, "message": {"content": "x"}}]}).encode())
    assert c.finish_reason is None and c.message.content == "x"


# -- size and time -------------------------------------------------------------------------------
async def test_an_oversized_streamed_body_is_refused_without_reading_it_all() -> None:
    """A valid completion of 64 MiB sent in chunks: the client stops at its 1 MiB cap."""
    sent = 0

    async def huge(request: web.Request) -> web.StreamResponse:
        nonlocal sent
        await request.read()
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        chunk = b"a" * (1 << 20)
        try:
            await resp.write(b'{"choices":[{"message":{"role":"assistant","content":"')
            for _ in range(64):
                await resp.write(chunk)
                sent += len(chunk)
            await resp.write(b'"}}]}')
        except (ConnectionError, RuntimeError):
            pass
        return resp

    async with serving(huge) as url, OpenAIClient(opts(url, max_response_bytes=1 << 20)) as client:
        with pytest.raises(ModelError, match="larger than 1,048,576 bytes"):
            await client.chat(MSGS, sampling=Sampling())
        assert client.n_retries == 0  # an oversized answer is not asked for again
    assert sent < 32 << 20


async def test_a_declared_oversized_body_is_refused_at_once() -> None:
    raw = body({"role": "assistant", "content": "a" * (2 << 20)})
    with pytest.raises(ModelError, match="larger than"):
        await chat_once(raw, max_response_bytes=1 << 20)


async def test_a_body_within_the_cap_is_read_whole() -> None:
    c = await chat_once(body({"role": "assistant", "content": "a" * (3 << 20)}), max_response_bytes=4 << 20)
    assert len(c.message.content) == 3 << 20


async def test_a_small_compressed_body_that_inflates_past_the_cap_is_refused() -> None:
    """The declared length is the compressed one: the cap counts the inflated bytes."""
    raw = gzip.compress(body({"role": "assistant", "content": "a" * (8 << 20)}))
    assert len(raw) < 1 << 20

    async def bomb(request: web.Request) -> web.Response:
        await request.read()
        headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
        return web.Response(body=raw, headers=headers)

    async with serving(bomb) as url, OpenAIClient(opts(url, max_response_bytes=1 << 20)) as client:
        with pytest.raises(ModelError, match="larger than 1,048,576 bytes"):
            await client.chat(MSGS, sampling=Sampling())


async def test_an_error_body_is_not_read_whole() -> None:
    async with serving(replying(b"x" * (8 << 20), status=400)) as url, OpenAIClient(opts(url)) as client:
        with pytest.raises(ModelError, match="HTTP 400") as info:
            await client.chat(MSGS, sampling=Sampling())
    assert len(str(info.value)) < 1000


@asynccontextmanager
async def raw_server(reply: bytes, *, then_stall: bool = False) -> AsyncIterator[str]:
    """A byte-level HTTP server: reads a request, writes ``reply``, then closes (or stalls)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            writer.write(reply)
            await writer.drain()
            if then_stall:
                await asyncio.sleep(30)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()


async def test_headers_then_silence_times_out_and_is_bounded() -> None:
    head = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"cho'
    async with raw_server(head, then_stall=True) as url, OpenAIClient(opts(url, timeout_s=0.3)) as client:
        with pytest.raises(ModelError, match="timed out"):  # not asyncio's TimeoutError
            await asyncio.wait_for(client.chat(MSGS, sampling=Sampling()), 60)


async def test_garbage_instead_of_http_is_not_reported_as_an_http_400() -> None:
    async with raw_server(b"garbage\r\n\r\n") as url, OpenAIClient(opts(url)) as client:
        with pytest.raises(ModelError, match="invalid HTTP response") as info:
            await client.chat(MSGS, sampling=Sampling())
    assert "HTTP 400" not in str(info.value)


# -- the runner ----------------------------------------------------------------------------------
async def test_a_run_with_surrogates_in_model_output_saves_every_rollout(tmp_path: Path) -> None:
    env = SingleTurnEnv(id="toy", version="1.0.0", tasks=make_tasks(3), grader=ExactGrader())
    config = make_config(num_tasks=3, rollouts=2)
    rd = RunDir(tmp_path)
    rd.create(config)
    async with (
        FakeChatServer(responder=lambda req: "Answer: \ud800\udc00x\ud800") as srv,
        OpenAIClient(opts(srv.base_url)) as client,
    ):
        await Runner(env=env, client=client, config=config, rundir=rd, concurrency=2).run(env.tasks("test"))
    rollouts = list(rd.iter_rollouts())
    assert len(rollouts) == 6 and all(r.error is None for r in rollouts)
    assert all("\ufffd" in r.completion for r in rollouts)


def test_the_writer_scrubs_surrogates_from_any_source(tmp_path: Path) -> None:
    """Environments, tools and graders can put surrogates in a rollout too: it is still saved."""
    rd = RunDir(tmp_path)
    rollout = Rollout(
        task_id="t",
        rollout_index=0,
        messages=[Message(role="tool", content="echo \udfff", name="f")],
        completion="x\ud800",
        timing=Timing(started_at=0.0),
        extra={"note\ud800": ["\ud800"]},
    )
    with rd.open_writer() as writer:
        writer.write(rollout)
        writer.write_many([rollout.model_copy(update={"rollout_index": 1})])
    saved = list(rd.iter_rollouts())
    assert [r.rollout_index for r in saved] == [0, 1]
    assert saved[0].messages[0].content == "echo \ufffd"
    assert saved[0].extra == {"note\ufffd": ["\ufffd"]}


async def test_the_fake_server_takes_a_long_transcript() -> None:
    """A multi-turn transcript passes aiohttp's default 1 MiB request cap (it answered HTTP 413)."""
    long = [Message(role="user", content="x" * (3 << 20))]
    async with FakeChatServer() as srv, OpenAIClient(opts(srv.base_url)) as client:
        c = await client.chat(long, sampling=Sampling())
    assert c.message.content == "Answer: 42"
