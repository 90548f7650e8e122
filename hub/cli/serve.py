"""``verihub serve-model``: the embedded model as a standalone OpenAI-compatible server."""

from __future__ import annotations

import ipaddress
import signal
import sys
import threading
from types import FrameType

import typer

from hub.cli.app import app
from hub.env import UsageError
from hub.run import LOCAL_MODELS, LocalModelServer

__all__ = ["mcp_serve_cmd", "serve_model_cmd"]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command("serve-model")
def serve_model_cmd(
    model: str = typer.Argument(
        ..., help="an embedded model: " + ", ".join(f"local:{name}" for name in LOCAL_MODELS)
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (loopback by default)"),
    port: int = typer.Option(8000, "--port", help="port to listen on"),
    parallel: int = typer.Option(4, "--parallel", help="requests decoded at once (slots)"),
    context: int = typer.Option(2048, "--context", help="context length of each slot, in tokens"),
) -> None:
    """Serve an embedded model over the OpenAI chat-completions API (plain and streaming).

    For other tools, offline: vf-eval, inspect, the openai SDK or a trainer point their base URL
    at http://HOST:PORT/v1 with any API key. Ctrl-C or SIGTERM stops it cleanly.
    """
    if not 0 < port < 65536:
        raise UsageError(f"--port {port} is not a TCP port (1-65535)")
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with LocalModelServer(
            model, parallel=parallel, context_per_slot=context, host=host, port=port
        ) as srv:
            if not _is_loopback(host):
                sys.stderr.write(
                    f"warning: {host} is not a loopback address; the server has no authentication\n"
                )
            sys.stdout.write(
                f"serving {model} at {srv.base_url} (model name {srv.name!r}, any API key); "
                "Ctrl-C or SIGTERM stops it\n"
            )
            sys.stdout.flush()
            while not stop.wait(0.2):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    sys.stdout.write("stopped\n")
    sys.stdout.flush()


@app.command("mcp-serve")
def mcp_serve_cmd(
    env_id: str = typer.Argument(..., help="an installed environment with tools (a ToolEnv)"),
    task: str = typer.Option(
        None, "--task", help="the task whose state the session gets (default: the first)"
    ),
    split: str = typer.Option("test", "--split", help="the split the task is taken from"),
) -> None:
    """Serve an environment's tools over MCP on stdin/stdout (each session: its own state copy).

    An MCP client starts it as a stdio server, e.g. command `verihub`, args `mcp-serve support_desk`.
    """
    from hub.env import aio, serve_stdio
    from hub.registry import load_environment

    aio.run(serve_stdio(load_environment(env_id), task_id=task, split=split))  # type: ignore[arg-type]
