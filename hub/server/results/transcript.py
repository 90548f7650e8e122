"""A stored rollout as its page shows it: the messages with their tool calls, the grade with its
sub-checks, the error, usage and timing.

Everything in a transcript is untrusted (the model wrote the messages, the environment the task
and the grader's reasons). Nothing here makes HTML: the template escapes every value and the
``visible`` filter (:mod:`hub.server.web.text`) shows control characters. What this module bounds
is size: a message text or tool-call argument longer than :data:`MAX_MESSAGE_CHARS` is cut (the
page says how much and links the rollout's raw JSON), and once :data:`MAX_PAGE_CHARS` have been
shown the rest of the messages are only counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from hub.env import Rollout
from hub.server.web import cut

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_PAGE_CHARS",
    "MAX_PARSE_BYTES",
    "CallView",
    "MessageView",
    "TranscriptView",
    "transcript_view",
]

#: A longer message text (or tool-call argument string) is cut to this many characters.
MAX_MESSAGE_CHARS = 20_000
#: At most this many characters of message text are put on one page.
MAX_PAGE_CHARS = 400_000
#: A stored rollout longer than this is not parsed for its page (only its raw JSON is offered).
MAX_PARSE_BYTES = 16 * 1024**2


@dataclass(frozen=True)
class CallView:
    """One tool call an assistant made: its name, id and arguments (pretty JSON when they parse)."""

    name: str
    id: str
    arguments: str
    cut: int = 0


@dataclass(frozen=True)
class MessageView:
    """One message: role, tool name or call id, text and tool calls; ``cut`` characters left out."""

    role: str
    name: str
    tool_call_id: str
    text: str
    cut: int = 0
    calls: list[CallView] = field(default_factory=list)


@dataclass(frozen=True)
class TranscriptView:
    """A rollout ready for the template (``rollout`` None: its stored JSON did not parse)."""

    rollout: Rollout | None
    messages: list[MessageView]
    not_shown: int  # messages left out once the page's budget was spent
    any_cut: bool
    extra: str  # the runner's extras as JSON ("" when none)
    problem: str = ""


def _arguments(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


class _Budget:
    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, text: str) -> tuple[str, int]:
        shown, left_out = cut(text, min(MAX_MESSAGE_CHARS, self.left))
        self.left -= len(shown)
        return shown, left_out


def _message(m: Any, budget: _Budget) -> MessageView:
    text, n_cut = budget.take(m.content or "")
    calls = []
    for c in m.tool_calls or ():
        args, args_cut = budget.take(_arguments(c.arguments))
        calls.append(CallView(c.name, c.id, args, args_cut))
    return MessageView(
        role=m.role, name=m.name or "", tool_call_id=m.tool_call_id or "", text=text, cut=n_cut, calls=calls
    )


def transcript_view(line: bytes) -> TranscriptView:
    """The view of one rollout's JSON line (as stored)."""
    if len(line) > MAX_PARSE_BYTES:
        too_big = f"this rollout is {len(line):,} bytes of JSON, too large to show here"
        return TranscriptView(None, [], 0, True, "", too_big)
    try:
        rollout = Rollout.model_validate_json(line)
    except (ValidationError, ValueError) as exc:
        return TranscriptView(None, [], 0, False, "", f"the stored rollout does not read back: {exc}"[:400])
    budget = _Budget(MAX_PAGE_CHARS)
    messages: list[MessageView] = []
    not_shown = 0
    for m in rollout.messages:
        if budget.left <= 0:
            not_shown += 1
            continue
        messages.append(_message(m, budget))
    any_cut = not_shown > 0 or any(m.cut or any(c.cut for c in m.calls) for m in messages)
    extra = ""
    if rollout.extra:
        extra, extra_cut = cut(
            json.dumps(rollout.extra, indent=2, ensure_ascii=False, default=str), MAX_MESSAGE_CHARS
        )
        any_cut = any_cut or extra_cut > 0
    return TranscriptView(rollout, messages, not_shown, any_cut, extra)
