"""Core records of verihub: tasks, chat messages, per-rollout state, steps and rollouts.

Saved records (`Task`, `Message`, `Rollout`, ...) are pydantic models so they validate on load
and serialise to JSON; `State` and `Step` are plain dataclasses because they live only in memory
while a rollout runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graders.grade import Check, Grade, GradeStatus

__all__ = [
    "Check",
    "ErrorKind",
    "Grade",
    "GradeStatus",
    "Message",
    "Role",
    "Rollout",
    "Sampling",
    "RolloutError",
    "State",
    "Step",
    "Task",
    "Timing",
    "ToolCall",
    "Usage",
    "final_answer",
    "scrub_surrogates",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD. ``"\\ud800"`` is valid JSON, so a
    model or tool can produce one, but it cannot be written as UTF-8 (it would break
    ``rollouts.jsonl``)."""
    if text.isascii():  # the usual case, and the cheapest test
        return text
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


Role = Literal["system", "user", "assistant", "tool"]
ErrorKind = Literal["model", "environment", "grader"]


class ToolCall(BaseModel):
    """A function call requested by the model, in the OpenAI tools format."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Call id; the tool's answer refers to it.")
    name: str = Field(description="Name of the function to call.")
    arguments: str = Field(default="{}", description="JSON-encoded arguments, as the model wrote them.")


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str | None = Field(default=None, description="Text of the message (None for a pure tool call).")
    tool_calls: tuple[ToolCall, ...] | None = Field(default=None, description="Calls made by an assistant.")
    tool_call_id: str | None = Field(default=None, description="For role=tool: the call answered.")
    name: str | None = Field(default=None, description="For role=tool: the tool's name.")

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI chat-completions request item."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


class Task(BaseModel):
    """One problem of an environment.

    ``id`` is stable across loads and versions of the same data. ``answer`` is the reference the
    grader uses and is never shown to the model.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Stable, unique id within the environment.")
    prompt: str | tuple[Message, ...] = Field(description="User text, or the full opening messages.")
    answer: Any = Field(default=None, description="Reference answer for the grader (never shown).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Difficulty, split, subject, tags...")

    def messages(self, system_prompt: str | None = None) -> list[Message]:
        """The opening messages of a rollout for this task."""
        if isinstance(self.prompt, str):  # Message(role=..., content=...), without the wrapper
            msgs = [Message.__pydantic_validator__.validate_python({"role": "user", "content": self.prompt})]
        else:
            msgs = list(self.prompt)
        if system_prompt is not None and not (msgs and msgs[0].role == "system"):
            msgs.insert(0, Message(role="system", content=system_prompt))
        return msgs


class Usage(BaseModel):
    """Token usage reported by the model server."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Timing(BaseModel):
    """Wall-clock timing of a rollout, in seconds."""

    started_at: float = Field(description="Unix time the rollout started.")
    model_s: float = Field(default=0.0, description="Time spent waiting for the model.")
    env_s: float = Field(default=0.0, description="Time spent in the environment's reset/step.")
    grade_s: float = Field(default=0.0, description="Time spent grading.")
    total_s: float = Field(default=0.0, description="Total time of the rollout.")


class RolloutError(BaseModel):
    """Why a rollout has no verdict. Errors are counted apart from wrong answers."""

    kind: ErrorKind = Field(description="Which part failed: the model call, the environment, or the grader.")
    message: str = Field(description="One-line description.")


class Rollout(BaseModel):
    """The full record of one attempt at one task: one line of ``rollouts.jsonl``."""

    task_id: str
    rollout_index: int = Field(ge=0, description="0..R-1 within the task.")
    messages: list[Message] = Field(description="The whole transcript, prompt included.")
    completion: str = Field(default="", description="Text of the final assistant message.")
    reward: float | None = Field(default=None, description="Grade score; None when the rollout errored.")
    passed: bool = False
    grade: Grade | None = None
    usage: Usage = Field(default_factory=Usage)
    timing: Timing
    error: RolloutError | None = None
    turns: int = Field(default=0, description="Number of model calls made.")
    truncated: bool = Field(default=False, description="Cut by a turn, token or time limit.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Runner extras (e.g. advantage).")

    @model_validator(mode="after")
    def _fill_completion(self) -> Rollout:
        """A record saved without ``completion`` (the run directory stores the answer once, in
        ``messages``) gets it back from the last assistant message."""
        if "completion" not in self.__pydantic_fields_set__:  # model_fields_set, without the property
            self.completion = final_answer(self.messages)
        return self

    @property
    def is_error(self) -> bool:
        """True when this rollout has no verdict (model, environment or grader failure)."""
        return self.error is not None


def final_answer(messages: list[Message]) -> str:
    """Text of the last assistant message ("" when there is none): a rollout's ``completion``."""
    for m in reversed(messages):  # a plain loop: this runs twice per rollout, a generator costs more
        if m.role == "assistant":
            return m.content or ""
    return ""


@dataclass
class State:
    """Per-rollout mutable state. One environment instance serves many rollouts at once, so
    everything that belongs to one rollout lives here, never on the environment."""

    task: Task
    messages: list[Message]
    turn: int = 0
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """What the environment answers to one model action.

    ``terminated``: the task reached its end (an answer was given, the proof closed, ...).
    ``truncated``: a limit (turns, tokens, time) cut the episode short.
    """

    messages: tuple[Message, ...] = ()
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Sampling(BaseModel):
    """Sampling options sent with every model request (None = the server's default)."""

    model_config = {"frozen": True}

    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=512, ge=1)
    seed: int | None = None
    stop: tuple[str, ...] | None = None
