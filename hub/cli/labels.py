"""``verihub labels pull``: an environment version's label file from a hub."""

from __future__ import annotations

from pathlib import Path

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import HubOpt, TokenOpt

__all__ = ["labels_app", "pull_cmd"]

err = make_console(stderr=True)

labels_app = typer.Typer(
    name="labels",
    help="People's labels on a hub's rollouts: the label file `verihub fidelity` reads.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(labels_app, name="labels")


@labels_app.command("pull")
def pull_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID[@VERSION] (default: the newest version)."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Label file to write (default: ID-VERSION.labels.jsonl)."
    ),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Download the labels of a version's runs that you may see, as a label file; measure the
    grader on it with `verihub fidelity ID --labels FILE`."""
    from hub.client import hub_settings, pull_labels

    url, tok = hub_settings(hub, token)
    if out is None:
        from hub.client import resolve_version

        _, env_id, version = resolve_version(url, ref, token=tok)
        out = Path(f"{env_id}-{version}.labels.jsonl")
        ref = ref.partition("@")[0] + "@" + version
    which, n = pull_labels(url, ref, token=tok, out=out)
    err.print(f"wrote {n} labelled responses of {which} to {out}", markup=False)
    if n:
        err.print(
            f"measure the grader: verihub fidelity {which.split('/')[1].split('@')[0]} --labels {out}",
            markup=False,
        )
