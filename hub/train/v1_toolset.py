"""A verihub environment's tools as a verifiers 0.4.x (``verifiers.v1``) Toolset, so the v1
harness's tool loop (vf-eval's ``null`` harness, for one) can call them.

:class:`VerihubToolset` is a taskset-scoped v1 tool server that vf-eval launches once per eval as
``python -m hub.train.v1_toolset`` (config in ``VF_CONFIG``). It registers one MCP tool per verihub
tool, under the verihub name and schema; each call goes through :meth:`hub.env.tools.Tool.call`,
so limits, validation, timeouts and errors-as-text are verihub's. Only a
:class:`~hub.env.tools.ToolEnv` whose ``step`` is ToolEnv's is supported: an environment whose own
``step`` runs its tools is refused (:func:`tools_refusal`), since such tools may touch the
rollout's state, which a tool server never sees. The tools run on the server's own instance of
the environment: a grader must judge from the transcript. Not carried over, and the rest in
full: docs/training.md, "verifiers 0.4.x (v1)".
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_core import to_jsonable_python

from hub.env import Environment, Tool, ToolEnv

__all__ = ["VerihubToolset", "VerihubToolsetConfig", "tools_refusal", "verihub_toolsets"]

vf: Any = importlib.import_module("verifiers.v1")


def tools_refusal(env: Environment) -> str | None:
    """Why ``env``'s tools cannot be a v1 toolset (one line naming the feature), or None when
    they can (also when it has no tools)."""
    if not env.tool_schemas():
        return None
    if not isinstance(env, ToolEnv) or type(env).step is not ToolEnv.step:
        return (
            f"tools run by the environment's own step ({type(env).__name__}.step), which needs "
            "per-rollout environment state a v1 tool server does not have; only ToolEnv tools "
            "(plain functions) become a v1 toolset"
        )
    return None


class VerihubToolsetConfig(vf.ToolsetConfig):  # type: ignore[misc]
    """Which verihub environment (its id and its arguments as JSON) serves the tools."""

    env: str = ""
    env_args: str = "{}"


def _mcp_function(tool: Tool, env: ToolEnv) -> Callable[..., Awaitable[str]]:
    """An async function with the tool's parameters (MCP reads its schema from the signature)
    that answers through :meth:`Tool.call` as verihub's runner does."""

    async def call(**kwargs: Any) -> str:
        arguments = json.dumps(to_jsonable_python(kwargs))
        content = await tool.call(arguments, timeout_s=env.tool_timeout_s)
        if len(content) > env.max_result_chars:
            content = content[: env.max_result_chars] + " [truncated]"
        return content

    params = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=field.annotation,
            default=inspect.Parameter.empty
            if field.is_required()
            else field.get_default(call_default_factory=True),
        )
        for name, field in tool.args_model.model_fields.items()
    ]
    call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = tool.description
    return call


class VerihubToolset(vf.Toolset[VerihubToolsetConfig]):  # type: ignore[misc]
    """The tools of a verihub :class:`~hub.env.tools.ToolEnv`, served over MCP (see the module doc)."""

    TOOL_PREFIX = None  # the verihub names, as the environment's graders and prompts know them

    def environment(self) -> ToolEnv:
        from hub.registry import load_environment

        env = load_environment(self.config.env, **json.loads(self.config.env_args))
        reason = tools_refusal(env)
        if reason is not None or not isinstance(env, ToolEnv):
            raise ValueError(f"{self.config.env}: {reason or 'no tools'}")
        return env

    def register(self, mcp: Any) -> None:
        env = self.environment()
        for tool in env.tools.values():
            mcp.add_tool(
                _mcp_function(tool, env),
                name=tool.name,
                description=tool.description or None,
                structured_output=False,
            )


def verihub_toolsets(env: Environment, env_id: str, env_args_json: str) -> list[Any]:
    """The v1 toolsets of ``env`` (built by ``env_id`` from ``env_args_json``): one
    :class:`VerihubToolset` when it has tools, none otherwise."""
    if not env.tool_schemas():
        return []
    return [VerihubToolset(VerihubToolsetConfig(env=env_id, env_args=env_args_json))]


if __name__ == "__main__":  # vf-eval starts the server as `python -m hub.train.v1_toolset`
    VerihubToolset.run()
