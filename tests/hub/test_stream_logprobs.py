"""``--stream`` with ``--logprobs``: token log-probabilities are assembled from the chunks of a
streamed answer, in order, into the same record as a plain answer's.

Before the fix the chunk assembler kept only content, tool calls, finish reason and usage, so a
streamed run recorded no tokens. Consumers: verihub's client (and a whole evaluation), and the
openai SDK reading the fake server's chunks; the embedded model (llama.cpp) when installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hub.env.types import Message, Sampling
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.completions import completion_from, parse_completion
from hub.run.fake_server import FakeChatServer, fake_logprobs
from hub.run.sse import ChunkAssembler, completion_chunks

MSGS = [Message(role="user", content="What is 6 * 7?")]
REPLY = "Answer: 42, I think."


def _assemble(events: list[bytes]) -> dict[str, Any]:
    assembler = ChunkAssembler()
    for event in events:
        for line in event.split(b"\n"):
            assembler.feed_line(line)
    assert assembler.done
    return assembler.completion()


def _body(content: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
                "logprobs": {"content": entries},
            }
        ]
    }


def test_assembler_carries_logprobs_in_order_as_the_plain_record() -> None:
    body = _body(REPLY, fake_logprobs(REPLY, top_logprobs=3))
    events = list(completion_chunks(body))
    assert sum(b'"logprobs"' in e for e in events) == len(fake_logprobs(REPLY)) > 3  # a token a chunk
    assembled = _assemble(events)
    assert assembled["choices"][0]["logprobs"] == body["choices"][0]["logprobs"]
    streamed = completion_from(assembled, raw=b"")
    plain = parse_completion(json.dumps(body).encode())
    assert streamed.tokens is not None and streamed.tokens == plain.tokens
    assert "".join(streamed.tokens["tokens"]) == REPLY
    assert streamed.tokens["token_ids"] == [e["id"] for e in fake_logprobs(REPLY)]


def test_entries_that_do_not_spell_the_content_still_arrive_whole() -> None:
    entries = [{"token": "x", "logprob": -1.0}, {"token": "y", "logprob": -2.0}]
    assembled = _assemble(list(completion_chunks(_body("a longer answer", entries), piece_chars=3)))
    assert assembled["choices"][0]["logprobs"]["content"] == entries


def test_vllm_token_ids_in_chunks_are_concatenated() -> None:
    def chunk(content: str, ids: list[int], lp: float) -> bytes:
        choice = {
            "index": 0,
            "delta": {"content": content},
            "logprobs": {"content": [{"token": content, "logprob": lp}]},
            "token_ids": ids,
        }
        return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"

    assembled = _assemble([chunk("Ans", [5], -0.5), chunk("wer", [6], -1.5), b"data: [DONE]\n\n"])
    tokens = completion_from(assembled, raw=b"").tokens
    assert tokens == {"tokens": ["Ans", "wer"], "logprobs": [-0.5, -1.5], "token_ids": [5, 6]}


def test_a_stream_without_logprobs_assembles_none() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}}]}
    assembled = _assemble(list(completion_chunks(body)))
    assert "logprobs" not in assembled["choices"][0]
    assert completion_from(assembled, raw=b"").tokens is None


@pytest.mark.parametrize("stream", [True, False])
async def test_client_gets_the_same_tokens_streamed_and_plain(stream: bool) -> None:
    async with FakeChatServer(responder=lambda r: REPLY) as srv:
        options = ClientOptions(base_url=srv.base_url, model="fake", stream=stream)
        async with OpenAIClient(options) as client:
            answer = await client.chat(MSGS, sampling=Sampling(max_tokens=16), logprobs=True)
            no_logprobs = await client.chat(MSGS, sampling=Sampling(max_tokens=16))
    assert srv.streamed == (2 if stream else 0)
    expected = fake_logprobs(REPLY)
    assert answer.tokens == {
        "tokens": [e["token"] for e in expected],
        "logprobs": [e["logprob"] for e in expected],
        "token_ids": [e["id"] for e in expected],
    }
    assert answer.message.content == REPLY and no_logprobs.tokens is None


async def test_an_evaluation_with_stream_and_logprobs_records_tokens(tmp_path: Path) -> None:
    from hub.run.evaluate import EvalOptions, evaluate
    from hub.run.rundir import RunDir

    async with FakeChatServer(responder=lambda r: "Answer: 42") as srv:
        await evaluate(
            "arith", model="fake", base_url=srv.base_url, out=tmp_path / "run", num_tasks=2,
            rollouts=1, logprobs=True, options=EvalOptions(stream=True),
        )  # fmt: skip
        assert srv.streamed == 2
    for rollout in RunDir(tmp_path / "run").iter_rollouts():
        [turn] = rollout.extra["tokens"]
        assert turn["tokens"] == ["Answer", ":", " 42"]
        assert turn["logprobs"] == [e["logprob"] for e in fake_logprobs("Answer: 42")]


async def test_openai_sdk_reads_streamed_logprobs_with_top_logprobs() -> None:
    openai = pytest.importorskip("openai")
    async with FakeChatServer(responder=lambda r: REPLY) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="unused")
        args: dict[str, Any] = dict(
            model="fake", messages=[{"role": "user", "content": "hi"}], logprobs=True, top_logprobs=2
        )
        plain = await client.chat.completions.create(**args)
        stream = await client.chat.completions.create(**args, stream=True)
        chunks = [c async for c in stream]
        await client.close()
    streamed = [
        t for c in chunks if c.choices and c.choices[0].logprobs for t in c.choices[0].logprobs.content
    ]
    assert len([c for c in chunks if c.choices and c.choices[0].logprobs]) == len(streamed) > 1
    assert "".join(t.token for t in streamed) == REPLY
    assert [t.model_dump() for t in streamed] == [t.model_dump() for t in plain.choices[0].logprobs.content]
    first = streamed[0]
    assert [a.token for a in first.top_logprobs] == [first.token, f"{first.token}~1"]
    assert first.top_logprobs[0].logprob == first.logprob > first.top_logprobs[1].logprob


def _have_local_model() -> bool:
    try:
        import xllamacpp  # noqa: F401

        from hub.run.local_model import local_model_path

        local_model_path("smollm2")
    except Exception:
        return False
    return True


@pytest.mark.model
@pytest.mark.skipif(not _have_local_model(), reason="embedded model not installed (bash scripts/install.sh)")
async def test_the_embedded_model_streams_logprobs() -> None:
    from hub.run.local_model import LocalModelServer

    with LocalModelServer("local:smollm2", parallel=1) as server:
        got = {}
        for stream in (False, True):
            options = ClientOptions(base_url=server.base_url, model="smollm2", stream=stream)
            async with OpenAIClient(options) as client:
                got[stream] = await client.chat(
                    MSGS, sampling=Sampling(max_tokens=6, temperature=0.0), logprobs=True, seed=0
                )
    streamed, plain = got[True], got[False]
    assert streamed.tokens is not None and plain.tokens is not None
    assert streamed.tokens["tokens"] == plain.tokens["tokens"] and len(streamed.tokens["tokens"]) > 1
    assert streamed.tokens["token_ids"] is not None and len(streamed.tokens["token_ids"]) == len(
        streamed.tokens["tokens"]
    )
    assert "".join(streamed.tokens["tokens"]) == streamed.message.content
    assert streamed.tokens["logprobs"] == pytest.approx(plain.tokens["logprobs"], abs=1e-3)
