"""An author's remote commands: ``verihub status``, ``yank``, ``visibility``, ``transfer``.

They talk to the hub one is logged in to (``verihub login``), or ``--hub``/``--token``; the
``verihub hub ...`` commands are for a hub's operator, on its data folder.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import HubOpt, TokenOpt

__all__ = ["describe_review", "status_cmd", "transfer_cmd", "visibility_cmd", "yank_cmd"]

console = make_console()


def describe_review(status: dict[str, Any]) -> list[str]:
    """Lines saying where a version's review stands, its yank, and its failed checks."""
    ref = f"{status['ref']}@{status['version']}"
    lines = [f"{ref}: review {status['state']}"]
    if status.get("yanked"):
        lines.append(f"yanked: {status.get('yank_reason') or 'no reason given'}")
    card = status.get("verifier_card")
    if isinstance(card, dict):
        lines.append(_card_line(card))
    elif status.get("state") in ("passed", "failed", "error"):
        lines.append("verifier card: error rate not measured (the version ships no measurable label file)")
    report = status.get("report") or {}
    for result in report.get("results", []) if isinstance(report, dict) else []:
        if result.get("status") in ("fail", "warn"):
            lines.append(f"  {result['status'].upper()} {result.get('name')}: {result.get('reason', '')}")
    return lines


def _card_line(card: dict[str, Any]) -> str:
    """The hub-measured verifier card of the version API, in one line."""

    def rate(name: str) -> str:
        r = card.get(name) or {}
        low, high = (r.get("ci95") or [0.0, 0.0])[:2]
        value = r.get("value")
        shown = f"{100 * value:.2f}%" if isinstance(value, (int, float)) else "-"
        return f"{shown} [{100 * low:.2f}, {100 * high:.2f}] ({r.get('k')}/{r.get('n')})"

    return (
        f"verifier card (measured by the hub's review, {card.get('n')} labelled responses): "
        f"accuracy {rate('accuracy')}, false-positive rate {rate('false_positive_rate')}, "
        f"false-negative rate {rate('false_negative_rate')}; labels sha256 {card.get('labels_sha256')}"
    )


@app.command("status")
def status_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID (the newest version) or OWNER/ID@VERSION."),
    wait: bool = typer.Option(False, "--wait", help="Follow the review until it ends."),
    as_json: bool = typer.Option(False, "--json", help="Print the version and its report as JSON."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """A pushed version's review state and report, from the hub (exit 1 when the review failed)."""
    from hub.client import hub_settings, review_status, wait_for_review

    url, tok = hub_settings(hub, token)
    if wait:
        status = wait_for_review(url, ref, token=tok, on_state=lambda s: console.print(f"review {s}"))
    else:
        status = review_status(url, ref, token=tok)
    if as_json:
        console.print_json(json.dumps(status))
    else:
        for line in describe_review(status):
            console.print(line)
    if status["state"] == "failed":
        raise typer.Exit(1)


@app.command("yank")
def yank_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID@VERSION."),
    reason: str = typer.Option(..., "--reason", help="Why (pip shows it to whoever pins the version)."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Yank a version: installs skip it unless it is pinned exactly (PEP 592)."""
    from hub.client import hub_settings, yank

    url, tok = hub_settings(hub, token)
    answer = yank(url, ref, reason, token=tok)
    console.print(f"{answer['ref']}@{answer['version']} is yanked: {reason}")


@app.command("visibility")
def visibility_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID."),
    private: bool = typer.Option(
        ..., "--private/--public", help="Private: only its owners see it. Public: everyone."
    ),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Make an environment private or public (every version, its runs and pages)."""
    from hub.client import hub_settings, set_visibility

    url, tok = hub_settings(hub, token)
    answer = set_visibility(url, ref, private=private, token=tok)
    console.print(f"{answer['ref']} is {'private' if answer['private'] else 'public'} now")


@app.command("transfer")
def transfer_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID."),
    to: str = typer.Option(..., "--to", help="The organisation to move it to (you must be a member)."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Move an environment to an organisation: its versions, runs and package name go with it."""
    from hub.client import hub_settings, transfer

    url, tok = hub_settings(hub, token)
    answer = transfer(url, ref, to, token=tok)
    console.print(f"{ref} is {answer['ref']} now")
