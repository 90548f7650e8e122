"""``verihub list`` and ``verihub info``."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from hub.catalogue import load_catalogue
from hub.cli import app
from hub.errors import UnknownEnvironmentError
from hub.registry import installed, list_environments

__all__ = ["info_cmd", "list_cmd"]

console = Console(highlight=False)


@app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List environments: installed ones and those the hub catalogue can install."""
    envs = list_environments()
    if as_json:
        print(json.dumps([e.__dict__ for e in envs], indent=2))
        return
    table = Table(title="verihub environments")
    table.add_column("id")
    table.add_column("version")
    table.add_column("installed")
    table.add_column("summary", overflow="fold")
    for e in envs:
        table.add_row(e.id, e.version, "yes" if e.installed else f"no ({e.install_hint})", e.summary)
    console.print(table)


@app.command("info")
def info_cmd(env_id: str = typer.Argument(..., help="Environment id, e.g. arith.")) -> None:
    """Show what is known about one environment (without importing it)."""
    inst = installed().get(env_id)
    entry = load_catalogue().get(env_id)
    if inst is None and entry is None:
        import difflib

        known = sorted(set(installed()) | {e.id for e in load_catalogue().environments})
        raise UnknownEnvironmentError(env_id, close=difflib.get_close_matches(env_id, known, n=3, cutoff=0.6))
    table = Table(show_header=False, title=f"environment {env_id}")
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    if inst is not None:
        table.add_row("installed", f"yes, version {inst.version}")
        table.add_row("distribution", inst.distribution or "")
        table.add_row("entry point", inst.entry_point or "")
        table.add_row("summary", inst.summary)
    else:
        table.add_row("installed", f"no: `verihub install {env_id}`")
    if entry is not None:
        table.add_row("catalogue version", entry.version)
        table.add_row("licence", entry.license)
        table.add_row("tags", ", ".join(entry.tags))
        table.add_row("source", entry.source)
        if entry.summary and inst is None:
            table.add_row("summary", entry.summary)
    console.print(table)
