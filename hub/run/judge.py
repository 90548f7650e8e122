"""LLM judges for rubrics, through hub's own model clients.

:mod:`graders.rubric` never imports ``hub``; it asks for a :class:`~graders.rubric.JudgeModel`.
This module provides two:

- :class:`ClientJudge` adapts a client you already hold (an :class:`~hub.run.client.OpenAIClient`
  inside ``async with``, or any :class:`~hub.run.client.ChatClient`). You own its lifetime.
- :class:`LazyJudge` owns its endpoint: it starts the embedded model (``local:smollm2``) or
  connects to ``base_url`` on the first judge call, so building an environment costs nothing.

Who closes a :class:`LazyJudge`
-------------------------------
Close it explicitly with ``await judge.aclose()`` or ``async with judge:``. The runner does not
know about judges, so two safety nets cover a judge nobody closed:

- the HTTP session belongs to the event loop that created it, and is closed when that loop
  shuts down (``asyncio.run`` finalises async generators; the judge parks one per loop whose
  ``finally`` closes the session). A later loop gets a fresh session;
- the embedded model server is stopped when the judge is garbage-collected or at interpreter
  exit (``weakref.finalize``).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from graders.rubric.judge import JudgeSampling, verdict_schema
from hub.env import Message, Sampling, UsageError
from hub.run.client import ChatClient, ClientOptions, OpenAIClient
from hub.run.local_model import LocalModelServer, is_local_model

__all__ = ["ClientJudge", "JudgeOptions", "LazyJudge"]

_ROLES = ("system", "user", "assistant")


def _to_messages(messages: Sequence[Mapping[str, str]]) -> list[Message]:
    out = []
    for m in messages:
        role = m.get("role")
        if role not in _ROLES:
            raise ValueError(f"judge message role {role!r} is not one of {_ROLES}")
        out.append(
            Message(role=cast(Literal["system", "user", "assistant"], role), content=m.get("content", ""))
        )
    return out


def _to_sampling(sampling: JudgeSampling) -> Sampling:
    return Sampling(temperature=sampling.temperature, max_tokens=sampling.max_tokens, seed=sampling.seed)


def _response_format(sampling: JudgeSampling) -> dict[str, Any] | None:
    """Constrain decoding to the verdict schema when the call's verdict codes are known.

    The ``enum`` holds this call's secret verdict codes, never the choices' labels, so a
    well-formed answer forced by the schema still carries a code that the judged text could not
    name (see :mod:`graders.rubric.prompt`).
    """
    if not sampling.verdicts:
        return None
    return {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "strict": True, "schema": verdict_schema(sampling.verdicts)},
    }


class ClientJudge:
    """A :class:`~graders.rubric.JudgeModel` over a hub chat client that the caller manages."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    async def complete(self, messages: Sequence[Mapping[str, str]], *, sampling: JudgeSampling) -> str:
        completion = await self.client.chat(
            _to_messages(messages),
            sampling=_to_sampling(sampling),
            response_format=_response_format(sampling),
        )
        return completion.message.content or ""


@dataclass(frozen=True)
class JudgeOptions:
    """Transport settings of a :class:`LazyJudge` (keyword-only, frozen)."""

    concurrency: int = 4
    timeout_s: float = 120.0
    max_retries: int = 3
    api_key_env: str | None = "OPENAI_API_KEY"
    local_parallel: int = 2


async def _close_at_loop_shutdown(client: OpenAIClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


class LazyJudge:
    """A judge model that starts its endpoint on first use (see the module docstring).

    ``model``: ``local:smollm2`` for the embedded model, else a model name served at
    ``base_url`` (an OpenAI-compatible endpoint such as ``http://127.0.0.1:8000/v1``).
    """

    def __init__(
        self, model: str, *, base_url: str | None = None, options: JudgeOptions | None = None
    ) -> None:
        if not is_local_model(model) and not base_url:
            raise UsageError(
                f"judge model {model!r} needs a base URL (an OpenAI-compatible endpoint such as "
                "http://127.0.0.1:8000/v1), or use local:smollm2"
            )
        self.model = model
        self.base_url = base_url
        self.options = options or JudgeOptions()
        self._server: LocalModelServer | None = None
        self._stop_server: weakref.finalize | None = None  # type: ignore[type-arg]
        self._client: OpenAIClient | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._closed = False

    @property
    def started(self) -> bool:
        """True once an endpoint was started or connected."""
        return self._client is not None or self._server is not None

    async def complete(self, messages: Sequence[Mapping[str, str]], *, sampling: JudgeSampling) -> str:
        client = await self._ensure_client()
        completion = await client.chat(
            _to_messages(messages),
            sampling=_to_sampling(sampling),
            response_format=_response_format(sampling),
        )
        return completion.message.content or ""

    async def aclose(self) -> None:
        """Close the HTTP session and stop the embedded server (idempotent)."""
        self._closed = True
        closer, self._closer, self._client = self._closer, None, None
        if closer is not None and self._loop is asyncio.get_running_loop():
            await closer.aclose()
        self._loop = None
        self.close()

    def close(self) -> None:
        """Stop the embedded model server (sync; the HTTP session closes with its loop)."""
        self._closed = True
        stop, self._stop_server, self._server = self._stop_server, None, None
        if stop is not None:
            stop()

    async def __aenter__(self) -> LazyJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<LazyJudge {self.model} {'started' if self.started else 'not started'}>"

    # -- internals -----------------------------------------------------------------------------
    async def _ensure_client(self) -> OpenAIClient:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        if self._closed:
            raise UsageError(f"judge {self.model} was closed; build a new one")
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
            self._client = self._closer = None  # a session of another (finished) loop is not usable here
        async with self._lock:
            if self._client is None:
                self._client = await self._connect()
            return self._client

    async def _connect(self) -> OpenAIClient:
        if is_local_model(self.model):
            if self._server is None:
                server = LocalModelServer(self.model, parallel=self.options.local_parallel)
                await asyncio.to_thread(server.start)
                self._server = server
                self._stop_server = weakref.finalize(self, server.stop)
            url, served = self._server.base_url, self._server.name
        else:
            url, served = cast(str, self.base_url), self.model
        env = self.options.api_key_env
        client = OpenAIClient(
            ClientOptions(
                base_url=url,
                model=served,
                api_key=os.environ.get(env) if env else None,
                timeout_s=self.options.timeout_s,
                max_retries=self.options.max_retries,
                max_in_flight=max(1, self.options.concurrency),
            )
        )
        await client.__aenter__()
        closer = _close_at_loop_shutdown(client)
        await closer.__anext__()  # parked: the loop's shutdown_asyncgens() runs its `finally`
        self._closer = closer
        try:
            await client.probe()
        except BaseException:
            self._closer = None
            await closer.aclose()
            raise
        return client
