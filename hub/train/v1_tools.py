"""verifiers 0.4.x (v1) Toolsets of plain Python functions as verihub tools, for v1 tasksets run
in-process by :mod:`hub.train.verifiers_v1`.

vf-eval serves each ``vf.Toolset`` as an MCP server; with verihub's runner as a plain chat/tool
loop, a Toolset that is only Python methods needs none of that: each ``@vf.tool`` bound method
becomes a :class:`hub.env.tools.Tool` (schema from its type hints, description its docstring)
named as v1 advertises it, ``<server_name>_<tool>`` (``CalcTools.add`` -> ``calc_tools_add``;
``TOOL_PREFIX = None``: the bare name), validated and run like any verihub tool.

Refused, with one line naming the feature, is what needs the MCP machinery: a server that is not
a plain ``vf.Toolset`` (or overrides ``register``), a remote or otherwise placed one, a stateful
toolset and ``setup``/``setup_task`` hooks (docs/training.md, "A v1 taskset in verihub").
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import create_model

from hub.env import MAX_CALLS_PER_TURN, Message, Tool, ToolCall

__all__ = ["V1Tools", "bridge_toolsets"]


@dataclass(frozen=True)
class V1Tools:
    """The bridged tools of a taskset, and how their calls are answered."""

    tools: dict[str, Tool]
    timeout_s: float = 30.0
    max_result_chars: int = 8_000
    max_calls_per_turn: int = MAX_CALLS_PER_TURN

    def schemas(self) -> list[dict[str, Any]] | None:
        return [t.schema() for t in self.tools.values()] or None

    async def answer(self, calls: Sequence[ToolCall]) -> tuple[Message, ...]:
        """One tool message per call (calls past ``max_calls_per_turn`` are answered, not run)."""
        replies = []
        for i, call in enumerate(calls):
            tool = self.tools.get(call.name)
            if i >= self.max_calls_per_turn:
                content = f"error: too many tool calls in one message (limit {self.max_calls_per_turn})"
            elif tool is None:
                content = f"error: unknown tool {call.name!r}; available: {', '.join(self.tools)}"
            else:
                content = await tool.call(call.arguments, timeout_s=self.timeout_s)
            if len(content) > self.max_result_chars:
                content = content[: self.max_result_chars] + " [truncated]"
            replies.append(Message(role="tool", content=content, tool_call_id=call.id, name=call.name))
        return tuple(replies)


def _tool(name: str, fn: Callable[..., Any]) -> Tool:
    """A verihub tool around a ``@vf.tool`` bound method (string annotations resolved)."""
    hints = typing.get_type_hints(fn)
    fields: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ValueError(f"tool {name}: *args/**kwargs are not supported")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hints.get(pname, Any), default)
    model = create_model(f"{name}_args", **fields)
    return Tool(name=name, description=(fn.__doc__ or "").strip(), fn=fn, args_model=model)


def _refusal(server: Any) -> str | None:
    """Why ``server`` cannot run as in-process tools, or None when it can."""
    vf: Any = importlib.import_module("verifiers.v1")
    from verifiers.v1.runtimes import SubprocessConfig
    from verifiers.v1.state import State, state_cls

    cls = type(server)
    name = cls.__name__
    if not isinstance(server, vf.Toolset) or cls.register is not vf.Toolset.register:
        return (
            f"an MCP server {name} that is not a plain Toolset of @vf.tool methods (it runs as a subprocess)"
        )
    config = server.config
    if getattr(config, "url", None):
        return f"a remote MCP tool server {name} (url {config.url})"
    runtime = getattr(config, "runtime", None)
    if getattr(config, "colocated", False) or (
        runtime is not None and not isinstance(runtime, SubprocessConfig)
    ):
        return f"an MCP tool server {name} placed in a runtime (colocated or {type(runtime).__name__})"
    if state_cls(cls) is not State:
        return f"a stateful tool server {name} (its state syncs over MCP)"
    for hook in ("setup", "setup_task"):
        if getattr(cls, hook) is not getattr(vf.Toolset, hook):
            return f"a tool server {name} with a {hook}() hook (it runs in the server's process)"
    return None


def bridge_toolsets(servers: Sequence[Any], refuse: Callable[[str], Exception]) -> V1Tools:
    """The tools of ``servers`` (a taskset's and its task class's ``toolsets``); raises
    ``refuse(feature)`` for a server that needs MCP (see the module doc) or a duplicate name."""
    from verifiers.v1.utils.decorators import discover_decorated

    tools: dict[str, Tool] = {}
    for server in servers:
        reason = _refusal(server)
        if reason is not None:
            raise refuse(reason)
        prefix = server.server_name
        for fn in discover_decorated(server, "tool"):
            raw = getattr(fn, "tool_name", None) or fn.__name__
            name = f"{prefix}_{raw}" if prefix else raw
            if name in tools:
                raise refuse(f"two tools named {name!r}")
            try:
                tools[name] = _tool(name, fn)
            except (ValueError, TypeError, NameError) as exc:
                raise refuse(f"a tool {name} whose signature verihub cannot read ({exc})") from exc
    return V1Tools(tools)
