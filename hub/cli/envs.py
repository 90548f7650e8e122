"""``verihub list`` and ``verihub info``."""

from __future__ import annotations

import json
import sys

import typer
from rich.table import Table

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.env import UnknownEnvironmentError, VerihubError
from hub.registry import installed, list_environments, load_catalogue, package_hash

__all__ = ["info_cmd", "list_cmd"]

console = make_console()


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
def info_cmd(
    env_id: str = typer.Argument(..., help="Environment id, e.g. arith."),
    catalogue: list[str] = typer.Option(None, "--catalogue", help="Also read this catalogue (file or URL)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    difficulty: bool = typer.Option(
        False, "--difficulty", help="Also load the installed environment and show its difficulty space."
    ),
) -> None:
    """Show what is known about one environment (without importing it): installed and catalogue
    metadata, and whether the installed package's content hash matches the catalogue's. With
    --difficulty the environment is loaded (its code runs) to show its difficulty axes."""
    cat = load_catalogue(extra=catalogue or ())
    for problem in cat.problems:
        sys.stderr.write(f"warning: {problem}\n")
    inst = installed().get(env_id)
    entry = cat.get(env_id)
    if inst is None and entry is None:
        import difflib

        known = sorted(set(installed()) | {e.id for e in cat.environments})
        raise UnknownEnvironmentError(env_id, close=difflib.get_close_matches(env_id, known, n=3, cutoff=0.6))
    rows: dict[str, str] = {}
    if inst is not None:
        rows["installed"] = f"yes, version {inst.version}"
        rows["distribution"] = inst.distribution or ""
        rows["entry point"] = inst.entry_point or ""
        rows["summary"] = inst.summary
        try:
            rows["installed hash"] = package_hash(env_id)
        except VerihubError as exc:
            rows["installed hash"] = f"unknown ({exc})"
        if difficulty:
            from hub.cli.curriculum import difficulty_rows

            rows.update(difficulty_rows(env_id))
    else:
        rows["installed"] = f"no: `verihub install {env_id}`"
    if entry is not None:
        rows["catalogue version"] = entry.version
        rows["catalogue"] = entry.catalogue
        rows["author"] = entry.author
        rows["licence"] = entry.license
        rows["tags"] = ", ".join(entry.tags)
        rows["source"] = entry.source
        rows["catalogue hash"] = entry.content_hash or "none (installs are not verified)"
        rows.setdefault("summary", entry.summary)
        if inst is not None and entry.content_hash and entry.version == inst.version:
            same = rows["installed hash"] == entry.content_hash
            rows["hash check"] = "matches the catalogue" if same else "DIFFERS from the catalogue"
    if as_json:
        print(json.dumps({"id": env_id, **{k.replace(" ", "_"): v for k, v in rows.items()}}, indent=2))
        return
    table = Table(show_header=False, title=f"environment {env_id}")
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in rows.items():
        table.add_row(key, value)
    console.print(table)
