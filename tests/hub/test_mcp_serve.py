"""``verihub mcp-serve``: a stateful environment's tools over MCP stdio, driven by the SDK's client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = (
    "import asyncio\n"
    "from hub.env.mcp_serve import serve_stdio\n"
    "from tests.hub.stateful_kit import make_env\n"
    "asyncio.run(serve_stdio(make_env(storage='file'), task_id='pay-alice'))\n"
)


def _params() -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return StdioServerParameters(command=sys.executable, args=["-c", SERVER], env=env, cwd=str(ROOT))


async def _session_calls(calls: list[tuple[str, dict[str, object]]]) -> list[tuple[bool, str]]:
    out = []
    async with stdio_client(_params()) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert "do pay-alice" in (init.instructions or "")
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"balance", "deposit", "set_balance", "boom"}
        assert set(tools["deposit"].inputSchema["properties"]) == {"name", "amount"}
        for name, args in calls:
            result = await session.call_tool(name, args)
            out.append((bool(result.isError), result.content[0].text))  # type: ignore[union-attr]
    return out


@pytest.mark.slow
async def test_a_session_works_on_its_own_copy_and_errors_come_back_as_error_results() -> None:
    first = await _session_calls(
        [
            ("deposit", {"name": "alice", "amount": 5}),
            ("balance", {"name": "alice"}),
            ("deposit", {"name": "alice'; DROP TABLE accounts; --", "amount": 1}),
            ("boom", {}),
            ("deposit", {"name": "alice", "amount": "lots"}),
        ]
    )
    assert first[0] == (False, "ok")
    assert json.loads(first[1][1]) == {"name": "alice", "balance": 105}
    assert first[2][0] and "KeyError" in first[2][1]
    assert first[3] == (True, "error: RuntimeError: the tool broke")
    assert first[4][0] and "invalid arguments" in first[4][1]
    second = await _session_calls([("balance", {"name": "alice"})])  # a new session: a fresh copy
    assert json.loads(second[0][1]) == {"name": "alice", "balance": 100}


def _installed(env_id: str) -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == env_id for ep in entry_points(group="verihub.environments"))


@pytest.mark.slow
@pytest.mark.skipif(not _installed("support_desk"), reason="environments/support_desk is not installed")
async def test_the_cli_serves_an_installed_environment() -> None:
    params = _params()
    params.args = ["-m", "hub", "mcp-serve", "support_desk", "--task", "desk-5000"]
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert len((await session.list_tools()).tools) == 12
        result = await session.call_tool("get_order", {"order_id": 1002})
        assert not result.isError and json.loads(result.content[0].text)["status"] == "placed"  # type: ignore[union-attr]
        cancel = await session.call_tool("cancel_order", {"order_id": 1002})
        again = await session.call_tool("cancel_order", {"order_id": 1002})
        assert not cancel.isError and again.isError  # the session's state changed
