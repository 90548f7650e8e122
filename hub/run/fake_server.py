"""A loopback OpenAI-compatible chat server for tests and benchmarks, with fault injection.

It listens on 127.0.0.1 only. Replies come from a ``responder(request_json)`` (default:
``"Answer: 42"``) that returns the reply's text, or a whole assistant message as a mapping to
script tool calls (:func:`tool_call_reply` builds one)::

    def responder(request):
        if request["messages"][-1]["role"] == "tool":        # the tool answered: give the answer
            return "Answer: " + request["messages"][-1]["content"]
        return tool_call_reply("add", {"a": 2, "b": 3})      # else call the tool

Faults are injected per request from a repeating ``schedule`` of fault
names, so tests are deterministic:

``ok``         a normal completion
``429``        HTTP 429 with ``Retry-After`` (seconds)
``500``        HTTP 500
``slow``       sleeps ``slow_s`` before answering (past a client's timeout)
``malformed``  HTTP 200 with a body that is not JSON
``drop``       closes the connection without an answer

Run it as a separate process for benchmarks: ``python -m hub.run.fake_server --port 8123``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aiohttp import web

__all__ = ["FAULTS", "FakeChatServer", "Reply", "Responder", "main", "tool_call_reply"]

FAULTS = ("ok", "429", "500", "slow", "malformed", "drop")
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
    ) -> None:
        bad = [f for f in schedule if f not in FAULTS]
        if bad:
            raise ValueError(f"unknown faults {bad}; known: {FAULTS}")
        self.responder = responder or _default_responder
        self._schedule = itertools.cycle(schedule or ("ok",))
        self.retry_after_s = retry_after_s
        self.slow_s = slow_s
        self.port = port
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
        if not isinstance(reply, str):
            return web.Response(body=_completion(payload, dict(reply)), content_type="application/json")
        data = self._body_cache.get(reply)
        if data is None:
            data = _completion(payload, {"role": "assistant", "content": reply})
            if len(self._body_cache) < 1024:
                self._body_cache[reply] = data
        return web.Response(body=data, content_type="application/json")


def _completion(request: dict[str, Any], message: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                }
            ],
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
