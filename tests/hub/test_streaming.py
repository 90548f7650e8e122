"""Streamed chat completions: the fake server streams like real servers, the client reads streams.

The openai SDK is the reference consumer of the server side: if it assembles the same answer from
our chunks as from the plain body, the chunks have the shape real servers send.
"""

from __future__ import annotations

import json

import pytest

from hub.env.errors import ModelError
from hub.env.types import Message, Sampling
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer, tool_call_reply
from hub.run.sse import ChunkAssembler, completion_chunks

openai = pytest.importorskip("openai")

MSGS = [Message(role="user", content="What is 1 + 1?")]


def opts(url: str, **kw: object) -> ClientOptions:
    base: dict[str, object] = dict(base_url=url, model="fake", backoff_base_s=0.01, backoff_max_s=0.05)
    base.update(kw)
    return ClientOptions(**base)  # type: ignore[arg-type]


def _tool_responder(request: dict[str, object]) -> object:
    return tool_call_reply("add", {"a": 2, "b": 3, "note": "a long argument " * 4}, call_id="call_7")


async def test_openai_sdk_reads_the_fake_servers_stream() -> None:
    async with FakeChatServer(responder=lambda r: "The answer is 42, after some thought.") as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="unused")
        stream = await client.chat.completions.create(
            model="fake",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [c async for c in stream]
        await client.close()
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The answer is 42, after some thought."
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1  # really in pieces
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 13
    assert srv.streamed == 1


async def test_openai_sdk_assembles_streamed_tool_calls() -> None:
    async with FakeChatServer(responder=_tool_responder) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="unused")
        stream = await client.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "add"}], stream=True
        )
        args, names, ids = "", "", set()
        async for c in stream:
            for call in (c.choices[0].delta.tool_calls or []) if c.choices else []:
                names += call.function.name or "" if call.function else ""
                args += call.function.arguments or "" if call.function else ""
                if call.id:
                    ids.add(call.id)
        await client.close()
    assert names == "add" and ids == {"call_7"}
    assert json.loads(args)["a"] == 2


async def test_client_streams_when_asked_and_gets_the_same_answer() -> None:
    async with FakeChatServer(responder=lambda r: "Answer: 42") as srv:
        async with OpenAIClient(opts(srv.base_url, stream=True)) as client:
            streamed = await client.chat(MSGS, sampling=Sampling(max_tokens=8))
        async with OpenAIClient(opts(srv.base_url)) as client:
            plain = await client.chat(MSGS, sampling=Sampling(max_tokens=8))
    assert srv.streamed == 1
    assert streamed.message == plain.message
    assert streamed.usage.total_tokens == plain.usage.total_tokens == 13  # include_usage was asked for
    assert streamed.finish_reason == plain.finish_reason == "stop"


async def test_client_assembles_streamed_tool_calls() -> None:
    async with FakeChatServer(responder=_tool_responder) as srv:
        async with OpenAIClient(opts(srv.base_url, stream=True)) as client:
            c = await client.chat(MSGS, sampling=Sampling())
    assert c.message.tool_calls is not None and len(c.message.tool_calls) == 1
    call = c.message.tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)["b"]) == ("call_7", "add", 3)
    assert c.finish_reason == "tool_calls"


async def test_a_server_that_always_streams_is_read_without_asking() -> None:
    async with FakeChatServer(always_stream=True) as srv, OpenAIClient(opts(srv.base_url)) as client:
        c = await client.chat(MSGS, sampling=Sampling())
    assert srv.streamed == 1 and c.message.content == "Answer: 42"


async def test_a_stream_cut_before_done_is_retried() -> None:
    async with (
        FakeChatServer(schedule=["truncate", "ok"]) as srv,
        OpenAIClient(opts(srv.base_url, stream=True)) as client,
    ):
        c = await client.chat(MSGS, sampling=Sampling())
    assert c.attempts == 2 and c.message.content == "Answer: 42"


async def test_a_stream_always_cut_fails_with_a_clear_error() -> None:
    async with (
        FakeChatServer(schedule=["truncate"]) as srv,
        OpenAIClient(opts(srv.base_url, stream=True, max_retries=1)) as client,
    ):
        with pytest.raises(ModelError, match=r"ended before its \[DONE\] event"):
            await client.chat(MSGS, sampling=Sampling())


async def test_an_oversized_stream_is_refused() -> None:
    big = "x" * 200_000
    async with (
        FakeChatServer(responder=lambda r: big) as srv,
        OpenAIClient(opts(srv.base_url, stream=True, max_response_bytes=50_000)) as client,
    ):
        with pytest.raises(ModelError, match="larger than 50,000 bytes"):
            await client.chat(MSGS, sampling=Sampling())


def test_assembler_round_trips_chunks_and_ignores_comments() -> None:
    body = {
        "id": "x",
        "model": "m",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "héllo"}}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }
    assembler = ChunkAssembler()
    assembler.feed_line(b": keep-alive\n")
    for event in completion_chunks(body, piece_chars=2, include_usage=True):
        for line in event.split(b"\n"):
            assembler.feed_line(line)
    assert assembler.done
    out = assembler.completion()
    assert out["choices"][0]["message"]["content"] == "héllo"
    assert out["usage"]["total_tokens"] == 3


@pytest.mark.parametrize(
    "payload", [b"data: [1, 2]", b"data: {not json", b'data: {"choices": [{"delta": 5}]}']
)
def test_assembler_refuses_malformed_chunks(payload: bytes) -> None:
    assembler = ChunkAssembler()
    assembler.feed_line(payload)
    with pytest.raises((ValueError, TypeError)):
        assembler.feed_line(b"")


async def test_an_evaluation_with_stream_gets_the_same_results(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    from hub.run.evaluate import EvalOptions, evaluate

    out = Path(str(tmp_path))
    async with FakeChatServer(responder=lambda r: "Answer: 42") as srv:
        common = dict(model="fake", base_url=srv.base_url, num_tasks=3, rollouts=2, sampling=Sampling())
        streamed = await evaluate("arith", out=out / "s", options=EvalOptions(stream=True), **common)  # type: ignore[arg-type]
        assert srv.streamed == 6
        plain = await evaluate("arith", out=out / "p", options=EvalOptions(), **common)  # type: ignore[arg-type]
        assert srv.streamed == 6
    assert streamed.n_rollouts == plain.n_rollouts == 6
    assert streamed.mean_reward == plain.mean_reward and streamed.usage == plain.usage
