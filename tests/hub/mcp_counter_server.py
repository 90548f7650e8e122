"""A small MCP server for the tests: a counter kept in the process, a sleeper, its pid."""

from __future__ import annotations

import os
import time

from mcp.server.fastmcp import FastMCP

server = FastMCP("counter")
_count = {"n": 0}


@server.tool()
def bump(by: int) -> str:
    """Add ``by`` to this server's counter and return it."""
    _count["n"] += by
    return str(_count["n"])


@server.tool()
def nap(seconds: float) -> str:
    """Sleep."""
    time.sleep(seconds)
    return "awake"


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


if __name__ == "__main__":
    server.run("stdio")
