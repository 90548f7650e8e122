"""A loopback OpenAI-compatible chat server for tests and benchmarks, with fault injection.

:class:`FakeChatServer` listens on 127.0.0.1 only. Replies come from a ``responder(request_json)``
(default: ``"Answer: 42"``) returning the reply's text or a whole assistant message
(:func:`tool_call_reply` scripts a tool call). Faults (:data:`FAULTS`: ``429``, ``500``, ``slow``,
``malformed``, ``drop``, ``truncate``) come per request from a repeating ``schedule``, so tests are
deterministic. Streamed answers (``"stream": true`` or ``always_stream=True``) and deterministic
token log-probabilities (``"logprobs": true``, :func:`fake_logprobs`) are served as real servers
do. Each fault and option: docs/testing.md, "The fake chat server".

Run it as a separate process for benchmarks: ``python -m hub.run.fake_server --port 8123``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aiohttp import web

from hub.run.sse import DONE, completion_chunks

__all__ = ["FAULTS", "FakeChatServer", "Reply", "Responder", "fake_logprobs", "main", "tool_call_reply"]

FAULTS = ("ok", "429", "500", "slow", "malformed", "drop", "truncate")
Reply = str | Mapping[str, Any]
"""The reply's text, or a whole assistant message (``content``, ``tool_calls``)."""
Responder = Callable[[dict[str, Any]], Reply]


def tool_call_reply(
    name: str, arguments: Mapping[str, Any] | str, *, call_id: str = "call_0"
) -> dict[str, Any]:
    """An assistant message that calls tool ``name`` (``arguments``: a mapping or raw JSON text)."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
    }


def _default_responder(request: dict[str, Any]) -> str:
    return "Answer: 42"


class FakeChatServer:
    """``async with FakeChatServer(schedule=["429", "ok"]) as server: server.base_url``."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        schedule: Sequence[str] = ("ok",),
        retry_after_s: float = 0.05,
        slow_s: float = 5.0,
        port: int = 0,
        always_stream: bool = False,
    ) -> None:
        bad = [f for f in schedule if f not in FAULTS]
        if bad:
            raise ValueError(f"unknown faults {bad}; known: {FAULTS}")
        self.responder = responder or _default_responder
        self._schedule = itertools.cycle(schedule or ("ok",))
        self.retry_after_s = retry_after_s
        self.slow_s = slow_s
        self.port = port
        self.always_stream = always_stream
        self.streamed = 0
        self.requests = 0
        self.answered = 0
        self.faults: dict[str, int] = {}
        self._runner: web.AppRunner | None = None
        self._body_cache: dict[str, bytes] = {}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> FakeChatServer:
        # aiohttp refuses request bodies over 1 MiB by default (HTTP 413), which a long multi-turn
        # transcript passes easily; a real model server takes far more
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024)
        await site.start()
        server = site._server
        if server is not None and self.port == 0:
            sockets = getattr(server, "sockets", None) or []
            self.port = sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeChatServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        fault = next(self._schedule)
        self.faults[fault] = self.faults.get(fault, 0) + 1
        body = await request.read()
        if fault == "429":
            return web.Response(
                status=429, text="rate limited", headers={"Retry-After": f"{self.retry_after_s:g}"}
            )
        if fault == "500":
            return web.Response(status=500, text="internal error")
        if fault == "malformed":
            return web.Response(status=200, text='{"choices": [', content_type="application/json")
        if fault == "drop":
            if request.transport is not None:
                request.transport.close()
            raise ConnectionResetError("dropped by fault injection")
        if fault == "slow":
            await asyncio.sleep(self.slow_s)
        payload = json.loads(body)
        reply = self.responder(payload)
        self.answered += 1
        if payload.get("stream") is True or self.always_stream:
            message = {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)
            return await self._stream(request, payload, message, cut=fault == "truncate")
        if not isinstance(reply, str) or payload.get("logprobs") is True:
            message = {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)
            return web.Response(body=_completion(payload, message), content_type="application/json")
        data = self._body_cache.get(reply)
        if data is None:
            data = _completion(payload, {"role": "assistant", "content": reply})
            if len(self._body_cache) < 1024:
                self._body_cache[reply] = data
        return web.Response(body=data, content_type="application/json")

    async def _stream(
        self, request: web.Request, payload: dict[str, Any], message: dict[str, Any], *, cut: bool
    ) -> web.StreamResponse:
        self.streamed += 1
        options = payload.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        completion = json.loads(_completion(payload, message))
        for event in completion_chunks(completion, include_usage=include_usage):
            if cut and event == DONE:
                break
            await resp.write(event)
        await resp.write_eof()
        return resp


_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def fake_logprobs(text: str, top_logprobs: int = 0) -> list[dict[str, Any]]:
    """``logprobs.content`` for ``text``: its tokens (words, punctuation, spaces) with made-up,
    deterministic log-probabilities, llama.cpp-style ids and ``top_logprobs`` alternatives."""

    def entry(token: str, token_id: int, logprob: float) -> dict[str, Any]:
        return {"id": token_id, "token": token, "bytes": list(token.encode()), "logprob": logprob}

    entries = []
    for i, token in enumerate(_TOKEN.findall(text)):
        logprob = -0.125 * (1 + i % 4)
        token_id = zlib.crc32(token.encode()) % 50_000
        alternatives = [entry(token, token_id, logprob)][: max(0, top_logprobs)] + [
            entry(f"{token}~{k}", (token_id + k) % 50_000, logprob - 2.0 * k)
            for k in range(1, max(0, min(20, top_logprobs)))
        ]
        entries.append({**entry(token, token_id, logprob), "top_logprobs": alternatives})
    return entries


def _completion(request: dict[str, Any], message: dict[str, Any]) -> bytes:
    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
        "message": message,
    }
    if request.get("logprobs") is True:
        top = request.get("top_logprobs")
        top_n = top if isinstance(top, int) and not isinstance(top, bool) else 0
        choice["logprobs"] = {"content": fake_logprobs(message.get("content") or "", top_n)}
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "fake"),
            "choices": [choice],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }
    ).encode()


def main(argv: list[str] | None = None) -> None:
    """Serve until killed (for benchmarks, in its own process)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8123)
    parser.add_argument("--schedule", default="ok", help="comma-separated faults, cycled")
    parser.add_argument("--slow-s", type=float, default=5.0, help="delay of the 'slow' fault")
    args = parser.parse_args(argv)

    async def serve() -> None:
        async with FakeChatServer(
            schedule=args.schedule.split(","), port=args.port, slow_s=args.slow_s
        ) as server:
            print(f"listening on {server.base_url}", flush=True)
            await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
