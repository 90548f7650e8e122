"""An async client for any OpenAI-compatible chat-completions endpoint.

Built on aiohttp directly (see docs/benchmarks.md for why not the openai SDK): one pooled
session, a cap on requests in flight, request-per-minute and token-per-minute limits
(aiolimiter), retries with exponential backoff and full jitter that honour ``Retry-After``,
per-request timeouts (one timer for all of them, :mod:`hub.run.deadlines`), and token
accounting. With ``ClientOptions(stream=True)`` it asks for a streamed answer (server-sent
events, with usage); a server that streams without being asked is read the same way
(:mod:`hub.run.sse` folds the chunks back into one completion).

Retried: connection failures, timeouts, HTTP 408/409/425/429/5xx, and bodies that are not a
valid completion; a ``Retry-After`` wait is honoured up to the request timeout. Not retried:
other 4xx. Those that no request of the run could pass (401, 403, 404 unknown model or path,
400/422 a request the server rejects) raise :class:`ModelConfigError`, which stops the run at
once with the server's message; those about one request only (413, or a 400 over the context
length) fail that rollout. An answer over ``max_response_bytes`` is refused unread, so a hostile
server cannot fill memory.
Everything in a body is untrusted: text is scrubbed of lone surrogates and a garbage token count
is recorded as 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

import aiohttp
from aiolimiter import AsyncLimiter
from pydantic_core import PydanticSerializationError, to_json

from hub.env import (
    Message,
    ModelConfigError,
    ModelError,
    ModelUnreachableError,
    Sampling,
    Usage,
    UsageError,
    scrub_surrogates,
)
from hub.run.completions import Completion, MalformedCompletion, completion_from, parse_completion
from hub.run.deadlines import SWEPT, RequestDeadlines
from hub.run.sse import ChunkAssembler

__all__ = ["ChatClient", "ClientOptions", "Completion", "OpenAIClient"]

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER_S = 120.0
_ERROR_DETAIL_BYTES = 4096  # of a non-200 body: enough for the server's message, never the whole body


@dataclass(frozen=True)
class ClientOptions:
    """Transport settings of a model client (keyword-only, frozen)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 5
    max_in_flight: int = 64
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    max_response_bytes: int = 32 * 1024 * 1024
    """A larger answer is refused (a :class:`ModelError`, not retried) without being read whole."""
    extra_headers: tuple[tuple[str, str], ...] = field(default=())
    stream: bool = False
    """Ask for a streamed answer (``stream: true`` with ``stream_options.include_usage``)."""

    def __post_init__(self) -> None:
        parsed = urlparse(self.base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise UsageError(
                f"--base-url {self.base_url!r} is not an http(s) URL; "
                "use e.g. http://127.0.0.1:8000/v1 (the part before /chat/completions)"
            )
        if self.max_in_flight < 1:
            raise UsageError("the cap on requests in flight must be at least 1")
        if self.max_response_bytes < 1:
            raise UsageError("max_response_bytes must be at least 1")


class ChatClient(Protocol):
    """What the runner needs from a model client."""

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling,
        tools: list[dict[str, Any]] | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        logprobs: bool = False,
    ) -> Completion: ...


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIClient:
    """Chat completions over HTTP. Use as ``async with OpenAIClient(opts) as client``."""

    def __init__(self, options: ClientOptions) -> None:
        self.options = options
        self._url = options.base_url.rstrip("/") + "/chat/completions"
        self._session: aiohttp.ClientSession | None = None
        self._sem = asyncio.Semaphore(options.max_in_flight)
        self._rpm = _request_limiter(options.requests_per_minute) if options.requests_per_minute else None
        self._tpm = AsyncLimiter(options.tokens_per_minute, 60.0) if options.tokens_per_minute else None
        headers = {"Content-Type": "application/json", **dict(options.extra_headers)}
        if options.api_key:
            headers["Authorization"] = f"Bearer {options.api_key}"
        self._headers = headers
        self._deadlines = RequestDeadlines(options.timeout_s) if SWEPT else None
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self.n_requests = 0
        self.n_retries = 0

    @property
    def usage(self) -> Usage:
        """Tokens used by every answered request so far."""
        return Usage(prompt_tokens=self._prompt_tokens, completion_tokens=self._completion_tokens)

    async def __aenter__(self) -> OpenAIClient:
        connector = aiohttp.TCPConnector(
            limit=self.options.max_in_flight, limit_per_host=0, ttl_dns_cache=300
        )
        if self._deadlines is not None:  # one timer for every request (hub.run.deadlines)
            self._deadlines.start()
            timeout = aiohttp.ClientTimeout(total=None)
        else:
            timeout = aiohttp.ClientTimeout(total=self.options.timeout_s)
        self._session = aiohttp.ClientSession(connector=connector, headers=self._headers, timeout=timeout)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._deadlines is not None:
            self._deadlines.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def probe(self) -> None:
        """Fail fast, before anything is written, when the endpoint cannot serve the run.

        ``GET /models`` must get an HTTP answer (any status). When it is 404 the URL may be
        missing its ``/v1``, so a one-token chat request checks the chat path itself: a 404
        there is a :class:`ModelConfigError` that suggests the likely fix.
        """
        session = self._require_session()
        base = self.options.base_url.rstrip("/")
        timeout = aiohttp.ClientTimeout(total=min(10.0, self.options.timeout_s))
        try:
            async with session.get(base + "/models", timeout=timeout) as resp:
                status = resp.status
            if status != 404:
                return
            ping = {
                "model": self.options.model,
                "messages": [{"role": "user", "content": "ping"}],
                "max_tokens": 1,
            }
            async with session.post(self._url, data=json.dumps(ping).encode(), timeout=timeout) as resp:
                if resp.status != 404:
                    return
                head, _ = await _read_at_most(resp, 200)
                detail = head.decode("utf-8", "replace").strip().replace("\n", " ")
        except (aiohttp.ClientConnectionError, asyncio.TimeoutError, OSError) as exc:
            raise ModelUnreachableError(
                f"cannot reach the model endpoint {self.options.base_url} ({_describe(exc)}); "
                "is the server running, and is --base-url right?"
            ) from exc
        if urlparse(base).path.endswith("/v1"):
            hint = f"check --base-url and that the server serves --model {self.options.model!r}"
        else:
            hint = f"OpenAI-compatible servers usually answer under /v1: try --base-url {base}/v1"
        raise ModelConfigError(f"HTTP 404 from {self._url}: {detail or 'not found'}; {hint}")

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling,
        tools: list[dict[str, Any]] | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        logprobs: bool = False,
    ) -> Completion:
        """One chat completion. ``response_format`` is passed through (e.g. a JSON schema that
        servers such as vLLM and llama.cpp enforce while decoding). ``logprobs`` asks for the
        answer's token log-probabilities (:attr:`Completion.tokens`)."""
        body = self._body(messages, sampling, tools, seed)
        if response_format is not None:
            body["response_format"] = response_format
        if logprobs:
            body["logprobs"] = True
        payload = _json_body(body)
        attempt = 0
        while True:
            attempt += 1
            try:
                if self._rpm is not None:
                    await self._rpm.acquire()
                if self._tpm is not None:
                    est_tokens = len(payload) // 4 + (sampling.max_tokens or 256)
                    await self._tpm.acquire(min(float(est_tokens), self._tpm.max_rate))
                async with self._sem:
                    self.n_requests += 1
                    completion = await self._post(payload)
                self._prompt_tokens += completion.usage.prompt_tokens
                self._completion_tokens += completion.usage.completion_tokens
                return completion if attempt == 1 else dataclasses.replace(completion, attempts=attempt)
            except _Retryable as exc:
                if attempt > self.options.max_retries:
                    raise ModelError(f"{exc} (gave up after {attempt} attempts)") from exc
                self.n_retries += 1
                await asyncio.sleep(self._backoff(attempt, exc.retry_after))

    # -- internals -----------------------------------------------------------------------------
    def _require_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("OpenAIClient used outside `async with`")
        return self._session

    def _body(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        tools: list[dict[str, Any]] | None,
        seed: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.options.model, "messages": [m.to_openai() for m in messages]}
        if sampling.temperature is not None:
            body["temperature"] = sampling.temperature
        if sampling.top_p is not None:
            body["top_p"] = sampling.top_p
        if sampling.max_tokens is not None:
            body["max_tokens"] = sampling.max_tokens
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        effective_seed = seed if seed is not None else sampling.seed
        if effective_seed is not None:
            body["seed"] = effective_seed
        if tools:
            body["tools"] = tools
        if self.options.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with full jitter; a server's ``Retry-After`` is honoured, but never
        past the request timeout (a server asking for an hour must not stall a rollout for one)."""
        cap = min(self.options.backoff_max_s, self.options.backoff_base_s * (2 ** (attempt - 1)))
        delay = random.uniform(0.0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, _MAX_RETRY_AFTER_S, self.options.timeout_s))
        return delay

    async def _post(self, payload: bytes) -> Completion:
        session = self._require_session()
        deadlines = self._deadlines
        task = deadlines.enter() if deadlines is not None else None
        try:
            async with session.post(self._url, data=payload) as resp:
                if resp.status != 200:
                    head, _ = await _read_at_most(resp, _ERROR_DETAIL_BYTES)
                    self._raise_for_status(resp.status, resp.headers.get("Retry-After"), head)
                if _media_type(resp.headers.get("Content-Type")) == "text/event-stream":
                    return await self._read_stream(resp)
                raw = await self._read_body(resp)
        except asyncio.CancelledError:
            if task is None or deadlines is None or not deadlines.timed_out(task):
                raise
            raise _Retryable("request failed: timed out") from None
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            if isinstance(exc, aiohttp.ClientResponseError):
                # raise_for_status is never called: this is aiohttp failing to parse the answer
                raise _Retryable(f"invalid HTTP response from {self._url}: {exc.message}") from exc
            raise _Retryable(f"request failed: {_describe(exc)}") from exc
        finally:
            if task is not None and deadlines is not None:
                deadlines.leave(task)
        try:
            return parse_completion(raw)
        except MalformedCompletion as exc:
            raise _Retryable(str(exc)) from exc

    async def _read_body(self, resp: aiohttp.ClientResponse) -> bytes:
        """The whole body, or a :class:`ModelError` as soon as it passes ``max_response_bytes``
        (counted after decompression, so a compressed bomb is stopped too)."""
        limit = self.options.max_response_bytes
        declared = resp.content_length
        if declared is not None and declared <= limit and "Content-Encoding" not in resp.headers:
            return await resp.read()  # exactly the declared bytes: nothing to cap
        if declared is None or declared <= limit:
            raw, more = await _read_at_most(resp, limit)
            if not more:
                return raw
        raise ModelError(
            f"the answer from {self._url} is larger than {limit:,} bytes (ClientOptions."
            "max_response_bytes); the server or model produced an oversized response"
        )

    async def _read_stream(self, resp: aiohttp.ClientResponse) -> Completion:
        """A streamed answer, assembled; capped at ``max_response_bytes`` like a plain one."""
        limit = self.options.max_response_bytes
        assembler = ChunkAssembler()
        seen = 0
        pending = b""
        try:
            while not assembler.done:
                chunk = await resp.content.read(1 << 16)
                if not chunk:
                    break
                seen += len(chunk)
                if seen > limit:
                    raise ModelError(
                        f"the streamed answer from {self._url} is larger than {limit:,} bytes "
                        "(ClientOptions.max_response_bytes); the server or model sent an oversized answer"
                    )
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    assembler.feed_line(line)
                    if assembler.done:
                        break
            if pending and not assembler.done:
                assembler.feed_line(pending)
            assembler.close()
            data = assembler.completion()
        except (ValueError, TypeError, RecursionError) as exc:
            what = f"{type(exc).__name__}: {str(exc)[:120]}"
            raise _Retryable(f"malformed stream from {self._url} ({what})") from exc
        if not assembler.done:
            raise _Retryable(f"the stream from {self._url} ended before its [DONE] event")
        try:
            return completion_from(data, raw=b"")
        except MalformedCompletion as exc:
            raise _Retryable(str(exc)) from exc

    def _raise_for_status(self, status: int, retry_after: str | None, raw: bytes) -> None:
        detail = _server_message(raw)
        if status in _RETRY_STATUS:
            raise _Retryable(f"HTTP {status} from {self._url}: {detail}", _parse_retry_after(retry_after))
        if status == 413 or (status == 400 and _PER_REQUEST_400.search(detail)):
            # this request is too long for the model; the next one may fit
            raise ModelError(f"HTTP {status} from {self._url}: {detail}")
        hint = {
            401: "check the API key (OPENAI_API_KEY or --api-key-env)",
            403: "the key is not allowed to use this model",
            404: "check --base-url (it usually ends in /v1) and --model",
            400: "the server rejects the requests of this run; check --model and the sampling flags",
            422: "the server rejects the requests of this run; check --model and the sampling flags",
        }.get(status)
        if hint is not None:
            raise ModelConfigError(f"HTTP {status} from {self._url}: {detail}; {hint}")
        raise ModelError(f"HTTP {status} from {self._url}: {detail}; the server rejected the request")


_PER_REQUEST_400 = re.compile(r"context|too long|maximum.{0,20}length|max_tokens|too many tokens", re.I)
"""A 400 about one request's size (over the model's context), not about the whole run."""


def _server_message(raw: bytes) -> str:
    """The server's error message: ``error.message`` of an OpenAI-style JSON body, or the text."""
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        inner = data.get("error", data)
        message = inner.get("message", inner.get("detail")) if isinstance(inner, dict) else inner
        if isinstance(message, str) and message.strip():
            text = message
    return scrub_surrogates(" ".join(text.split()))[:300]


def _media_type(content_type: str | None) -> str:
    """The media type of a ``Content-Type`` header, lower case (``resp.content_type`` parses the
    parameters too, which a completion's body never needs)."""
    return (content_type or "").partition(";")[0].strip().lower()


def _json_body(body: dict[str, Any]) -> bytes:
    """A request body as compact UTF-8 JSON, by pydantic-core's encoder (a quarter of
    ``json.dumps``'s cost); what it refuses (text with a lone surrogate, which UTF-8 cannot hold)
    goes through ``json.dumps``, whose ASCII escapes can."""
    try:
        return to_json(body)
    except PydanticSerializationError:
        return json.dumps(body).encode()


def _request_limiter(per_minute: float) -> AsyncLimiter:
    """A limiter with a small burst: at most one second's worth (and at least one request)."""
    per_second = per_minute / 60.0
    window = max(1.0, 1.0 / per_second)
    return AsyncLimiter(per_second * window, window)


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def _read_at_most(resp: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of the body, and whether more followed."""
    buf = bytearray()
    while len(buf) <= limit:
        chunk = await resp.content.read(min(1 << 16, limit + 1 - len(buf)))
        if not chunk:
            return bytes(buf), False
        buf += chunk
    return bytes(buf[:limit]), True


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]
