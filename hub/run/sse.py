"""Streamed chat completions (server-sent events), both ways.

- :class:`ChunkAssembler` folds the ``chat.completion.chunk`` events of a streamed answer back into
  the body of a plain ``chat.completion`` (content, tool calls by index, finish reason, usage,
  and the token log-probabilities of ``choices[].logprobs.content`` and vLLM's ``token_ids``, in
  stream order), so the client parses a streamed and a plain answer with the same code.
  Everything in a chunk is untrusted: unknown fields are ignored, and a chunk that is not an
  object fails the answer.
- :func:`completion_chunks` cuts a plain completion into the events a server streams, ending with
  ``data: [DONE]`` (the fake server uses it, so tests exercise the same shapes real servers send).
  A completion with ``logprobs.content`` is streamed one token a chunk, each chunk carrying its
  token's entry, as llama.cpp, vLLM and OpenAI do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["DONE", "ChunkAssembler", "completion_chunks", "sse_event"]

DONE = b"data: [DONE]\n\n"


class ChunkAssembler:
    """Feed it the lines of an SSE stream; :meth:`completion` returns the assembled body."""

    def __init__(self) -> None:
        self.done = False
        self._content: list[str] = []
        self._saw_content = False
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: Any = None
        self._usage: Any = None
        self._logprobs: list[Any] | None = None  # choices[0].logprobs.content, chunk after chunk
        self._token_ids: list[Any] | None = None  # vLLM's choices[0].token_ids, chunk after chunk
        self._meta: dict[str, Any] = {}
        self._data: list[str] = []

    def feed_line(self, line: bytes) -> None:
        """One line of the stream (with or without its line ending)."""
        text = line.decode("utf-8").rstrip("\r\n")
        if text == "":
            self._dispatch()
        elif text.startswith(":"):
            return  # an SSE comment (keep-alive)
        elif text.startswith("data:"):
            self._data.append(text[5:].lstrip(" ") if text.startswith("data: ") else text[5:])
        # other SSE fields (event:, id:, retry:) carry nothing for chat completions

    def close(self) -> None:
        """The stream ended: dispatch a last event that had no blank line after it."""
        self._dispatch()

    def _dispatch(self) -> None:
        if not self._data:
            return
        payload = "\n".join(self._data)
        self._data = []
        if payload.strip() == "[DONE]":
            self.done = True
            return
        chunk = json.loads(payload)
        if not isinstance(chunk, dict):
            raise TypeError("a stream chunk is not a JSON object")
        if "error" in chunk and "choices" not in chunk:
            raise ValueError(f"the server sent an error in the stream: {str(chunk['error'])[:200]}")
        for key in ("id", "model", "created"):
            if key in chunk and key not in self._meta:
                self._meta[key] = chunk[key]
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise TypeError("a chunk's delta is not an object")
            content = delta.get("content")
            if isinstance(content, str):
                self._saw_content = True
                self._content.append(content)
            for call in delta.get("tool_calls") or ():
                self._add_call(call)
            self._add_tokens(choice)
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]

    def _add_tokens(self, choice: dict[str, Any]) -> None:
        """A chunk's token log-probabilities and ids, appended in stream order. Not checked here:
        the entries are read by the same code as a plain answer's (which drops garbage)."""
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict) and logprobs.get("content") is not None:
            entries = logprobs["content"]
            self._logprobs = (self._logprobs or []) + (entries if isinstance(entries, list) else [entries])
        ids = choice.get("token_ids")
        if ids is not None:
            self._token_ids = (self._token_ids or []) + (ids if isinstance(ids, list) else [ids])

    def _add_call(self, call: Any) -> None:
        if not isinstance(call, dict):
            raise TypeError("a streamed tool call is not an object")
        index = call.get("index", len(self._calls))
        if not isinstance(index, int):
            raise TypeError("a streamed tool call's index is not an integer")
        slot = self._calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        if call.get("id"):
            slot["id"] = call["id"]
        function = call.get("function") or {}
        if isinstance(function.get("name"), str):
            slot["name"] += function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            slot["arguments"].append(arguments)
        elif arguments is not None:
            slot["arguments"].append(json.dumps(arguments))

    def completion(self) -> dict[str, Any]:
        """The assembled answer in the shape of a plain (non-streamed) chat completion."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._content) if self._saw_content else None,
        }
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": slot["id"] or f"call_{i}",
                    "type": "function",
                    "function": {"name": slot["name"], "arguments": "".join(slot["arguments"])},
                }
                for i, slot in sorted(self._calls.items())
            ]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": self._finish}
        if self._logprobs is not None:
            choice["logprobs"] = {"content": self._logprobs}
        if self._token_ids is not None:
            choice["token_ids"] = self._token_ids
        return {**self._meta, "object": "chat.completion", "choices": [choice], "usage": self._usage}


def sse_event(data: Mapping[str, Any]) -> bytes:
    """One ``data:`` event."""
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def completion_chunks(
    completion: Mapping[str, Any], *, piece_chars: int = 8, include_usage: bool = False
) -> Iterator[bytes]:
    """The SSE events that stream ``completion`` (a plain chat completion body), then ``[DONE]``."""
    base = {
        "id": completion.get("id", "chatcmpl-stream"),
        "object": "chat.completion.chunk",
        "created": completion.get("created", 0),
        "model": completion.get("model", ""),
    }
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: Any = None, logprobs: Any = None) -> bytes:
        event: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
        if logprobs is not None:
            event["logprobs"] = {"content": logprobs}
        return sse_event({**base, "choices": [event]})

    yield chunk({"role": "assistant", "content": None if message.get("content") is None else ""})
    content = message.get("content") or ""
    entries = (choice.get("logprobs") or {}).get("content") or []
    tokens = [e["token"] for e in entries if isinstance(e, dict) and isinstance(e.get("token"), str)]
    if entries and len(tokens) == len(entries) and "".join(tokens) == content:
        for token, entry in zip(tokens, entries, strict=True):  # one token a chunk, with its entry
            yield chunk({"content": token}, logprobs=[entry])
    elif entries and not content:
        yield chunk({}, logprobs=entries)
    else:  # entries that do not spell the content (or none) ride on the first piece
        for start in range(0, len(content), max(1, piece_chars)):
            piece = content[start : start + piece_chars]
            yield chunk({"content": piece}, logprobs=(entries or None) if start == 0 else None)
    for i, call in enumerate(message.get("tool_calls") or ()):
        head = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"]},
        }
        yield chunk({"tool_calls": [{**head, "function": {**head["function"], "arguments": ""}}]})
        arguments = call["function"].get("arguments") or ""
        for start in range(0, len(arguments), max(1, piece_chars)):
            piece = arguments[start : start + piece_chars]
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage and completion.get("usage") is not None:
        yield sse_event({**base, "choices": [], "usage": completion["usage"]})
    yield DONE
