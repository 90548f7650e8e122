"""A tool environment's tools over MCP (the official ``mcp`` SDK, stdio transport).

::

    verihub mcp-serve support_desk --task desk-5000      # a client starts this as its server

Each MCP session is one rollout: a :class:`~hub.env.stateful.StatefulToolEnv` gives the session
its own copy of the task's seed database on its first call and closes it when the server stops.
Calls go through :meth:`hub.env.tools.Tool.call`: the same argument validation, size limits,
timeout and result cap as in a verihub run; a failed call is an MCP error result with the text
the model would see. ``mcp`` is imported only here (``pip install 'verihub[mcp]'``).
"""

from __future__ import annotations

import json
from typing import Any

from hub.env.errors import UsageError
from hub.env.state import RolloutDatabase
from hub.env.stateful import STATE_KEY, StatefulToolEnv
from hub.env.tools import ToolEnv
from hub.env.types import Task

__all__ = ["McpToolServer", "serve_stdio"]


class McpToolServer:
    """The MCP server of one task of ``env`` (its states are per session)."""

    def __init__(self, env: ToolEnv, task: Task) -> None:
        try:
            from mcp.server.lowlevel import Server
        except ImportError:
            raise UsageError("MCP needs the mcp package: pip install 'verihub[mcp]'") from None
        self.env = env
        self.task = task
        self.states: dict[int, RolloutDatabase] = {}
        server: Any = Server(f"verihub-{env.id}", instructions=self._instructions())
        server.list_tools()(self._list_tools)
        server.call_tool(validate_input=False)(self._call_tool)  # validated by the tool itself
        self.server = server

    def _instructions(self) -> str:
        prompt = self.task.prompt if isinstance(self.task.prompt, str) else ""
        return "\n\n".join(p for p in (self.env.system_prompt or "", prompt) if p)

    async def _list_tools(self) -> list[Any]:
        from mcp import types

        out = []
        for tool in self.env.tools.values():
            fn = tool.schema()["function"]
            out.append(
                types.Tool(name=fn["name"], description=fn["description"], inputSchema=fn["parameters"])
            )
        return out

    def _bound(self) -> dict[str, Any]:
        if not isinstance(self.env, StatefulToolEnv):
            return {}
        key = id(self.server.request_context.session)
        db = self.states.get(key)
        if db is None or db.closed:
            db = self.states[key] = self.env.open_state(self.task)
        return {STATE_KEY: db}

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        from mcp import types

        tool = self.env.tools.get(name)
        if tool is None:
            text, failed = f"error: unknown tool {name!r}; available: {', '.join(self.env.tools)}", True
        else:
            text = await tool.call(
                json.dumps(arguments), timeout_s=self.env.tool_timeout_s, bound=self._bound()
            )
            failed = text.startswith("error")
        if len(text) > self.env.max_result_chars:
            text = text[: self.env.max_result_chars] + " [truncated]"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=failed)

    async def run_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        try:
            async with stdio_server() as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        for db in self.states.values():
            db.close()
        self.states.clear()
        await self.env.aclose()


def _find(env: ToolEnv, task_id: str | None, split: str) -> Task:
    for task in env.tasks(split):
        if task_id is None or task.id == task_id:
            return task
    raise UsageError(f"{env.id} has no task {task_id!r} in split {split!r}")


async def serve_stdio(env: ToolEnv, *, task_id: str | None = None, split: str = "test") -> None:
    """Serve ``env``'s tools for one task (the first of ``split`` by default) on stdin/stdout."""
    if not isinstance(env, ToolEnv):
        raise UsageError(f"{env.id} has no tools to serve (it is not a ToolEnv)")
    await McpToolServer(env, _find(env, task_id, split)).run_stdio()
