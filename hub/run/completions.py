"""Reading a chat completion body: everything in it is untrusted.

:func:`parse_completion` turns a response body (or, through :func:`completion_from`, a body that
:mod:`hub.run.sse` assembled from a stream) into a :class:`Completion`. Text is scrubbed of lone
surrogates, a garbage token count is recorded as 0 rather than throwing the answer away, and
anything malformed is a :class:`MalformedCompletion` (the client retries it).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from hub.env import Message, ToolCall, Usage, scrub_surrogates

__all__ = ["Completion", "MalformedCompletion", "completion_from", "parse_completion"]

_MESSAGE = Message.__pydantic_validator__.validate_python  # Message(**data), without the wrapper
_USAGE = Usage.__pydantic_validator__.validate_python
_MAX_TOKEN_COUNT = 2**53  # a reported token count above this (or negative) is garbage, recorded as 0


class MalformedCompletion(ValueError):
    """The body is not a valid chat completion."""


@dataclass(slots=True)
class Completion:
    """One model answer (not frozen: a frozen dataclass sets each field through
    ``object.__setattr__``, which costs more than the rest of reading an answer)."""

    message: Message
    usage: Usage
    finish_reason: str | None
    attempts: int = 1
    tokens: dict[str, Any] | None = None
    """With ``logprobs=True`` and a server that returns them: ``{"tokens": [str], "logprobs":
    [float], "token_ids": [int] | None}`` for the answer's tokens (ids when the server sends them:
    llama.cpp's ``id``, vLLM's ``token_ids`` or ``token_id:N`` tokens)."""


def parse_completion(raw: bytes) -> Completion:
    """A completion from a response body; everything in it is untrusted.

    Text is scrubbed of lone surrogates (``"\\ud800"`` is valid JSON but cannot be written
    as UTF-8, so it would break ``rollouts.jsonl``). Token counts are bookkeeping: a garbage
    count is recorded as 0 rather than throwing the answer away.
    """
    try:
        data = _loads(raw)
    except (ValueError, RecursionError) as exc:
        snippet = raw[:80].decode("utf-8", "replace")
        raise MalformedCompletion(
            f"malformed completion from server ({type(exc).__name__}): {snippet!r}"
        ) from exc
    return completion_from(data, raw=raw)


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)``, parsed by pydantic's Rust parser when it can (a third of the cost);
    what it refuses (a lone surrogate escape, a byte-order mark, deep nesting) goes to
    ``json.loads``, so the result and the errors are ``json.loads``'s."""
    try:
        return from_json(raw)
    except ValueError:
        return json.loads(raw)


def completion_from(data: Any, *, raw: bytes) -> Completion:
    """A completion from a parsed (or stream-assembled) body."""
    try:
        choice = data["choices"][0]
        msg = choice["message"]
        content = msg.get("content")
        if type(content) is not str or not content.isascii():  # plain ASCII text: nothing to check
            content = _content_text(content)
        calls = msg.get("tool_calls")
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = tuple(
                ToolCall(
                    id=scrub_surrogates(str(c.get("id") or f"call_{i}")),
                    name=scrub_surrogates(str(c["function"]["name"])),
                    arguments=_arguments_text(c["function"].get("arguments")),
                )
                for i, c in enumerate(calls)
            )
        usage_raw = data.get("usage")
        if not isinstance(usage_raw, dict):
            usage_raw = {}
        usage = _USAGE(
            {
                "prompt_tokens": _token_count(usage_raw.get("prompt_tokens")),
                "completion_tokens": _token_count(usage_raw.get("completion_tokens")),
            }
        )
        finish = choice.get("finish_reason")
        return Completion(
            _MESSAGE(message),
            usage,
            scrub_surrogates(finish) if isinstance(finish, str) else None,
            tokens=_token_logprobs(choice) if choice.get("logprobs") else None,
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
        shown = raw or json.dumps(data, default=str).encode()
        snippet = shown[:80].decode("utf-8", "replace")
        raise MalformedCompletion(
            f"malformed completion from server ({type(exc).__name__}): {snippet!r}"
        ) from exc


_TOKEN_ID = re.compile(r"token_id:(\d+)")


def _token_logprobs(choice: Mapping[str, Any]) -> dict[str, Any] | None:
    """The answer's tokens and log-probabilities from ``choice.logprobs.content`` (None when the
    server sent none or sent garbage: bookkeeping never costs an answer)."""
    entries = (
        (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    )
    if not isinstance(entries, list) or not entries:
        return None
    tokens: list[str] = []
    logprobs: list[float] = []
    ids: list[int] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        value = entry.get("logprob")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        token = scrub_surrogates(entry["token"])
        tokens.append(token)
        logprobs.append(float(value))
        raw_id = entry.get("id")
        match = _TOKEN_ID.fullmatch(token)
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            ids.append(raw_id)
        elif match is not None:
            ids.append(int(match.group(1)))
    listed = choice.get("token_ids")
    if isinstance(listed, list) and len(listed) == len(tokens) and all(type(i) is int for i in listed):
        ids = list(listed)
    return {"tokens": tokens, "logprobs": logprobs, "token_ids": ids if len(ids) == len(tokens) else None}


def _content_text(content: object) -> str | None:
    """A message's content as text: a string, or the text parts of a list of content parts."""
    if content is None:
        return None
    if isinstance(content, str):
        return scrub_surrogates(content)
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                raise TypeError("content part is not a text part")
        return scrub_surrogates("".join(texts))
    raise TypeError(f"content is a {type(content).__name__}, not a string")


def _arguments_text(arguments: object) -> str:
    """Tool-call arguments as JSON text (some servers send an object instead of a string)."""
    if arguments is None or arguments == "":
        return "{}"
    if isinstance(arguments, str):
        return scrub_surrogates(arguments)
    return scrub_surrogates(json.dumps(arguments))


def _token_count(value: object) -> int:
    """A reported token count, or 0 when it is missing or not a plausible count."""
    if type(value) is int:  # the usual case, checked first
        return value if 0 <= value <= _MAX_TOKEN_COUNT else 0
    if isinstance(value, bool) or value is None:
        return 0
    try:
        number = float(value) if isinstance(value, str) else value
        if not isinstance(number, (int, float)) or not math.isfinite(number):
            return 0
        count = int(number)
    except (ValueError, TypeError, OverflowError):
        return 0
    return count if 0 <= count <= _MAX_TOKEN_COUNT else 0
