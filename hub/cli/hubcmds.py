"""``verihub search``, ``verihub install`` and ``verihub uninstall`` (the hub catalogue)."""

from __future__ import annotations

import json
import sys

import typer
from rich.table import Table

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.env import UsageError
from hub.registry import load_catalogue, parse_spec, uninstall
from hub.registry.install import install

__all__ = ["install_cmd", "search_cmd", "uninstall_cmd"]

console = make_console()


def _warn_problems(problems: list[str]) -> None:
    for p in problems:
        sys.stderr.write(f"warning: {p}\n")


@app.command("search")
def search_cmd(
    text: str = typer.Argument("", help="Words to look for in ids, summaries, tags, authors and licences."),
    catalogue: list[str] = typer.Option(None, "--catalogue", help="Also read this catalogue (file or URL)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    allow_insecure: bool = typer.Option(
        False, "--allow-insecure", help="Accept plain-http catalogues that are not on loopback."
    ),
) -> None:
    """Search the hub catalogue (the shipped one plus those in your config file)."""
    cat = load_catalogue(extra=catalogue or (), allow_insecure=allow_insecure)
    _warn_problems(cat.problems)
    found = cat.search(text)
    if as_json:
        print(json.dumps([e.model_dump(mode="json") for e in found], indent=2))
        return
    if not found:
        console.print(f"no environment matches {text!r}; `verihub search` with no words lists them all")
        return
    table = Table(title=f"catalogue matches for {text!r}" if text else "catalogue")
    for col in ("id", "version", "licence", "tags", "summary"):
        table.add_column(col, overflow="fold")
    for e in found:
        table.add_row(e.id, e.version, e.license, ", ".join(e.tags), e.summary)
    console.print(table)


@app.command("install")
def install_cmd(
    spec: str = typer.Argument(
        ..., help="ID[@VERSION] (catalogue; with --hub, the one owner of ID there) or OWNER/ID[@VERSION]."
    ),
    catalogue: list[str] = typer.Option(None, "--catalogue", help="Also read this catalogue (file or URL)."),
    no_deps: bool = typer.Option(False, "--no-deps", help="Do not install the environment's dependencies."),
    pip_arg: list[str] = typer.Option(None, "--pip-arg", help="Extra argument for pip (repeatable)."),
    hub: str = typer.Option(None, "--hub", help="Hub URL for OWNER/ID specs (default: `verihub login`'s)."),
    allow_unreviewed: bool = typer.Option(
        False, "--allow-unreviewed", help="With OWNER/ID: also install a version that has not passed review."
    ),
    allow_insecure: bool = typer.Option(
        False, "--allow-insecure", help="Accept plain-http catalogues that are not on loopback."
    ),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox", help="Build sources without the sandbox (where bubblewrap is missing)."
    ),
) -> None:
    """Install an environment from the catalogue (ID[@VERSION]) or from a hub (OWNER/ID[@VERSION])
    with pip, verifying its content hash."""
    if "/" not in spec and hub is not None:  # a bare id on a named hub: only when one owner has it
        from hub.client import hub_settings, resolve_on_hub

        env_id, version = parse_spec(spec)
        url, token = hub_settings(hub)
        spec = resolve_on_hub(env_id, hub=url, token=token) + (f"@{version}" if version else "")
    if "/" in spec:
        from hub.client import hub_settings, install_from_hub

        url, token = hub_settings(hub)
        got = install_from_hub(
            spec,
            hub=url,
            token=token,
            allow_unreviewed=allow_unreviewed,
            no_deps=no_deps,
            pip_args=pip_arg or (),
            on_note=lambda note: console.print(f"note: {note}", soft_wrap=True),
        )
        console.print(
            f"installed {spec.split('@')[0]} {got.entry.version} from {url} "
            f"(hash verified: {got.content_hash})",
            soft_wrap=True,
        )
        return
    cat = load_catalogue(extra=catalogue or (), allow_insecure=allow_insecure)
    _warn_problems(cat.problems)
    if not cat.versions(parse_spec(spec)[0]):
        _owners_on_hub(parse_spec(spec)[0])
    if unsafe_no_sandbox:
        sys.stderr.write("UNSAFE: --unsafe-no-sandbox: a source is built without the sandbox\n")
    res = install(spec, catalogue=cat, pip_args=pip_arg or (), no_deps=no_deps, unsafe=unsafe_no_sandbox)
    how = "hash verified" if res.verified else "no content hash in the catalogue: not verified"
    console.print(
        f"installed {res.entry.id} {res.entry.version} from {res.entry.source} ({how}: {res.content_hash})",
        soft_wrap=True,  # one line even when piped, so the path and hash can be copied whole
    )


def _owners_on_hub(env_id: str) -> None:
    """For an id no catalogue lists: when the hub of ``verihub login`` has it (by one owner or
    several), a :class:`UsageError` that names them and says what to type; else nothing."""
    from hub.client import AmbiguousIdError, HubError, hub_settings, resolve_on_hub

    try:
        url, token = hub_settings()
        ref = resolve_on_hub(env_id, hub=url, token=token)
    except AmbiguousIdError:
        raise
    except (UsageError, HubError):
        return  # no hub configured, not there, or unreachable: the catalogue's own answer follows
    raise UsageError(
        f"{env_id!r} is in no catalogue, but {url} has it as {ref} (not offered in its catalogue: "
        f"no reviewed version yet, or held for a person); `verihub install {ref}` installs it by owner"
    )


@app.command("uninstall")
def uninstall_cmd(env_id: str = typer.Argument(..., help="Environment id.")) -> None:
    """Uninstall the distribution that provides an environment."""
    dist = uninstall(env_id)
    console.print(f"uninstalled {dist} (environment {env_id})")
