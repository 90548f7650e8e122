"""Tool calling in the OpenAI tools format, with tools written as typed Python functions.

``ToolEnv(tools=[add], tasks=..., grader=..., max_turns=6)``: each tool's JSON schema comes from
its signature (via pydantic) and its docstring. The model's arguments are hostile input:
size-limited, parsed as JSON and validated before the function runs; a bad call or a tool
exception goes back to the model as an error message, never into the runner. At most
``max_calls_per_turn`` calls of one message run. An answer without tool calls ends the episode.

Each call has a time limit (``tool_timeout_s``). An ``async def`` tool is cancelled at the limit;
a plain ``def`` tool runs on a thread of its own, and at the limit the model gets the timeout
error while the thread is abandoned (Python cannot kill a thread). A tool that may hang for good
should be async, or run its work in a subprocess or :class:`graders.pool.WorkerPool`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from graders.protocol import Grader
from hub.env.aio import within
from hub.env.environment import MultiTurnEnv, TaskSource
from hub.env.errors import EnvironmentDefinitionError
from hub.env.types import Message, State, Step, Task, ToolCall

__all__ = ["Tool", "ToolEnv", "tool_schema"]

MAX_ARGUMENT_CHARS = 65_536
MAX_CALLS_PER_TURN = 32


@dataclass(frozen=True)
class Tool:
    """A Python function exposed to the model, with its validated argument model."""

    name: str
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, bound: tuple[str, ...] = ()) -> Tool:
        """``bound``: parameters the environment fills in (a rollout's state), kept out of the schema."""
        sig = inspect.signature(fn)
        fields: dict[str, Any] = {}
        for pname, param in sig.parameters.items():
            if pname in bound:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise EnvironmentDefinitionError(f"tool {fn.__name__}: *args/**kwargs are not supported")
            if param.annotation is inspect.Parameter.empty:
                raise EnvironmentDefinitionError(f"tool {fn.__name__}: parameter {pname!r} needs a type hint")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (param.annotation, default)
        model = create_model(f"{fn.__name__}_args", **fields)
        doc = inspect.getdoc(fn) or ""
        return cls(name=fn.__name__, description=doc.split("\n\n")[0].strip(), fn=fn, args_model=model)

    def schema(self) -> dict[str, Any]:
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    async def call(self, arguments: str, *, timeout_s: float, bound: Mapping[str, Any] | None = None) -> str:
        """Run the tool on the model's JSON arguments; errors come back as text for the model.

        A synchronous tool runs on its own thread; past ``timeout_s`` the model gets a timeout
        error at once and the thread is abandoned (see the module docstring). ``bound`` adds the
        arguments the environment fills in (never the model).
        """
        if len(arguments) > MAX_ARGUMENT_CHARS:
            return f"error: arguments longer than {MAX_ARGUMENT_CHARS} characters"
        try:
            raw = json.loads(arguments or "{}")
            if not isinstance(raw, dict):
                return "error: arguments must be a JSON object"
            args = self.args_model.model_validate(raw)
        except json.JSONDecodeError as exc:
            return f"error: arguments are not valid JSON ({exc.msg})"
        except RecursionError:  # e.g. '[[[[...' nested past the parser's depth
            return "error: arguments are nested too deeply"
        except ValidationError as exc:
            first = exc.errors()[0]
            return f"error: invalid arguments: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        kwargs = {name: getattr(args, name) for name in type(args).model_fields}
        kwargs.update(bound or {})
        try:
            if inspect.iscoroutinefunction(self.fn):
                result = await within(self.fn(**kwargs), timeout_s)
            else:
                result = await within(_in_thread(self.fn, kwargs), timeout_s)
            return result if isinstance(result, str) else json.dumps(result, default=str)
        except asyncio.TimeoutError:
            return f"error: tool {self.name} timed out after {timeout_s:g}s"
        except Exception as exc:  # the model sees the failure and can try again
            return f"error: {type(exc).__name__}: {_exception_text(exc)}"


def _exception_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails must not escape into the runner
        return "(no message)"


async def _in_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``fn(**kwargs)`` on a new daemon thread, awaited without blocking the event loop.

    A daemon thread rather than ``asyncio.to_thread``: a call that never returns is abandoned
    when its timeout passes, and an abandoned thread of the default executor would keep the
    loop's shutdown (and the process's exit) waiting for it.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():  # timed out and abandoned
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def target() -> None:
        try:
            outcome, failed = fn(**kwargs), False
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            pass

    threading.Thread(target=target, name=f"verihub-tool-{getattr(fn, '__name__', 'fn')}", daemon=True).start()
    return await future


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI ``tools`` entry for a typed Python function."""
    return Tool.from_function(fn).schema()


class ToolEnv(MultiTurnEnv):
    """A multi-turn environment where the model may call tools before answering."""

    max_turns = 8

    def __init__(
        self,
        *,
        tools: Sequence[Callable[..., Any]],
        tasks: Sequence[Task] | Mapping[str, Sequence[Task]] | TaskSource,
        grader: Grader,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int = 8,
        tool_timeout_s: float = 10.0,
        max_result_chars: int = 8_000,
        max_calls_per_turn: int = MAX_CALLS_PER_TURN,
    ) -> None:
        super().__init__(
            tasks=tasks,
            grader=grader,
            id=id,
            version=version,
            system_prompt=system_prompt,
            max_turns=max_turns,
        )
        built = [Tool.from_function(fn) for fn in tools]
        names = [t.name for t in built]
        if len(set(names)) != len(names):
            raise EnvironmentDefinitionError(f"duplicate tool names: {names}")
        self.tools: dict[str, Tool] = {t.name: t for t in built}
        if max_calls_per_turn < 1:
            raise EnvironmentDefinitionError(f"max_calls_per_turn must be >= 1, got {max_calls_per_turn}")
        self.tool_timeout_s = tool_timeout_s
        self.max_result_chars = max_result_chars
        self.max_calls_per_turn = max_calls_per_turn

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        return [t.schema() for t in self.tools.values()] or None

    async def step(self, state: State, action: Message) -> Step:
        if not action.tool_calls:
            return Step(terminated=True)
        calls = action.tool_calls
        limit = self.max_calls_per_turn
        replies = [await self._answer(call, state) for call in calls[:limit]]
        # every call needs an answer (the next request is rejected otherwise), but past the limit
        # none runs: a message of hundreds of calls must not hold the rollout for hours
        skipped = f"error: too many tool calls in one message (limit {limit}); this call was not run"
        replies += [self._reply(call, skipped) for call in calls[limit:]]
        return Step(messages=tuple(replies))

    def tool_context(self, state: State) -> Mapping[str, Any]:
        """Arguments the environment gives every tool call of this rollout (none by default;
        :class:`hub.env.stateful.StatefulToolEnv` gives the rollout's database)."""
        return {}

    async def _answer(self, call: ToolCall, state: State) -> Message:
        tool = self.tools.get(call.name)
        if tool is None:
            content = f"error: unknown tool {call.name!r}; available: {', '.join(self.tools)}"
        else:
            content = await tool.call(
                call.arguments, timeout_s=self.tool_timeout_s, bound=self.tool_context(state)
            )
        return self._reply(call, content)

    def _reply(self, call: ToolCall, content: str) -> Message:
        if len(content) > self.max_result_chars:
            content = content[: self.max_result_chars] + " [truncated]"
        return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)
