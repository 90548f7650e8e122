"""``McpToolEnv``: a tool environment whose tools come from an MCP server it starts (stdio).

::

    env = McpToolEnv(command=["python", "-m", "my_server"], tasks=..., grader=...)

The server is started once at construction to list its tools (their JSON schemas become the
model's tools), then once per rollout: each rollout talks to its own server process over its
own session, so a server that keeps state per process keeps it per rollout. The process is
stopped when the episode ends, when the rollout's state is dropped, or at :meth:`aclose`. The
model's arguments get the same treatment as Python tools: a size limit, JSON parsing, validation
against the tool's input schema, a time limit per call (a call past it stops the rollout's
server; later calls answer with an error), and the result cap. ``mcp`` is imported only here.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from graders.protocol import Grader
from hub.env.aio import within
from hub.env.environment import TaskSource
from hub.env.errors import EnvironmentDefinitionError
from hub.env.tools import MAX_ARGUMENT_CHARS, MAX_CALLS_PER_TURN, ToolEnv
from hub.env.types import Message, State, Step, Task, ToolCall

__all__ = ["McpToolEnv"]

_SESSION_KEY = "verihub_mcp_session"


def _params(command: Sequence[str], env: Mapping[str, str] | None, cwd: str | None) -> Any:
    try:
        from mcp import StdioServerParameters
    except ImportError:
        raise EnvironmentDefinitionError(
            "MCP tools need the mcp package: pip install 'verihub[mcp]'"
        ) from None
    if not command:
        raise EnvironmentDefinitionError("McpToolEnv needs the server's command")
    return StdioServerParameters(
        command=command[0], args=list(command[1:]), env=dict(env) if env else None, cwd=cwd
    )


class _Session:
    """One server process and its session, owned by a task of its own (the SDK's transports
    must be entered and left in one task; reset and steps may run in different ones)."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.requests: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[Any]]] = asyncio.Queue()
        self.ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.stopped = False

    async def start(self, timeout_s: float) -> list[Any]:
        self.task = asyncio.ensure_future(self._run())
        try:
            return await within(asyncio.shield(self.ready), timeout_s)
        except BaseException:
            self.stop()
            raise

    async def _run(self) -> None:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        try:
            async with stdio_client(self.params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                if not self.ready.done():
                    self.ready.set_result(list((await session.list_tools()).tools))
                while True:
                    name, args, reply = await self.requests.get()
                    try:
                        result = await session.call_tool(name, args)
                    except Exception as exc:  # handed to the waiting call
                        if not reply.done():
                            reply.set_exception(exc)
                        continue
                    if not reply.done():
                        reply.set_result(result)
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("stopped"))
            raise
        finally:
            self.stopped = True

    async def call(self, name: str, args: dict[str, Any], timeout_s: float) -> str:
        if self.stopped or self.task is None or self.task.done():
            return "error: the tool server has stopped"
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self.requests.put((name, args, reply))
        try:
            result = await within(reply, timeout_s)
        except asyncio.TimeoutError:
            self.stop()  # a hung server is stopped; its state is gone with it
            return f"error: tool {name} timed out after {timeout_s:g}s; the tool server was stopped"
        except Exception as exc:
            return f"error: {type(exc).__name__}: {exc}"
        text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
        return text if not result.isError or text.startswith("error") else f"error: {text}"

    def stop(self) -> None:
        self.stopped = True
        if self.task is not None and not self.task.done():
            self.task.cancel()


def _discover(params: Any, timeout_s: float) -> list[Any]:
    """List the server's tools from a thread with its own loop (construction may happen inside
    a running loop)."""
    out: dict[str, Any] = {}

    async def ask() -> None:
        session = _Session(params)
        try:
            out["tools"] = await session.start(timeout_s)
        finally:
            session.stop()
            if session.task is not None:
                await asyncio.gather(session.task, return_exceptions=True)

    def target() -> None:
        try:
            asyncio.run(ask())
        except BaseException as exc:  # noqa: BLE001 - reported below
            out["error"] = exc

    thread = threading.Thread(target=target, name="verihub-mcp-discover", daemon=True)
    thread.start()
    thread.join(timeout_s + 5.0)
    if "tools" not in out:
        raise EnvironmentDefinitionError(
            f"the MCP server did not list its tools: {out.get('error', 'timed out')}"
        )
    return list(out["tools"])


class McpToolEnv(ToolEnv):
    """A multi-turn tool environment backed by an MCP server started per rollout."""

    def __init__(
        self,
        *,
        command: Sequence[str],
        tasks: Sequence[Task] | Mapping[str, Sequence[Task]] | TaskSource,
        grader: Grader,
        server_env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        startup_timeout_s: float = 30.0,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int = 8,
        tool_timeout_s: float = 10.0,
        max_result_chars: int = 8_000,
        max_calls_per_turn: int = MAX_CALLS_PER_TURN,
    ) -> None:
        super().__init__(
            tools=[],
            tasks=tasks,
            grader=grader,
            id=id,
            version=version,
            system_prompt=system_prompt,
            max_turns=max_turns,
            tool_timeout_s=tool_timeout_s,
            max_result_chars=max_result_chars,
            max_calls_per_turn=max_calls_per_turn,
        )
        self.params = _params(command, server_env, cwd)
        self.startup_timeout_s = startup_timeout_s
        listed = _discover(self.params, startup_timeout_s)
        self.mcp_tools: dict[str, dict[str, Any]] = {
            t.name: {"description": t.description or "", "parameters": dict(t.inputSchema)} for t in listed
        }
        self._live: weakref.WeakSet[_Session] = weakref.WeakSet()

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        return [
            {"type": "function", "function": {"name": name, **spec}} for name, spec in self.mcp_tools.items()
        ] or None

    async def reset(self, task: Task) -> State:
        state = await super().reset(task)
        session = _Session(self.params)
        await session.start(self.startup_timeout_s)
        self._live.add(session)
        state.data[_SESSION_KEY] = session
        weakref.finalize(state, session.stop)
        return state

    async def step(self, state: State, action: Message) -> Step:
        session: _Session = state.data[_SESSION_KEY]
        try:
            if not action.tool_calls:
                session.stop()
                return Step(terminated=True)
            limit = self.max_calls_per_turn
            replies = [self._reply(c, await self._mcp_answer(session, c)) for c in action.tool_calls[:limit]]
            skipped = f"error: too many tool calls in one message (limit {limit}); this call was not run"
            replies += [self._reply(c, skipped) for c in action.tool_calls[limit:]]
            return Step(messages=tuple(replies))
        except BaseException:
            session.stop()
            raise

    async def _mcp_answer(self, session: _Session, call: ToolCall) -> str:
        spec = self.mcp_tools.get(call.name)
        if spec is None:
            return f"error: unknown tool {call.name!r}; available: {', '.join(self.mcp_tools)}"
        if len(call.arguments) > MAX_ARGUMENT_CHARS:
            return f"error: arguments longer than {MAX_ARGUMENT_CHARS} characters"
        try:
            args = json.loads(call.arguments or "{}")
        except (json.JSONDecodeError, RecursionError):
            return "error: arguments are not valid JSON"
        if not isinstance(args, dict):
            return "error: arguments must be a JSON object"
        import jsonschema

        try:
            jsonschema.validate(args, spec["parameters"])
        except jsonschema.ValidationError as exc:
            where = ".".join(map(str, exc.absolute_path)) or "arguments"
            return f"error: invalid arguments: {where}: {exc.message[:200]}"
        return await session.call(call.name, args, self.tool_timeout_s)

    def live_sessions(self) -> int:
        return sum(1 for s in list(self._live) if not s.stopped)

    async def aclose(self) -> None:
        sessions = list(self._live)
        for s in sessions:
            s.stop()
        await asyncio.gather(*(s.task for s in sessions if s.task is not None), return_exceptions=True)
        await super().aclose()
