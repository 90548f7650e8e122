"""``verihub hub bounty ...``: create, list, show and move bounties on a hub over its HTTP API.

Every command talks to the hub you logged in to (``verihub login``) with the stored token, or to
``--hub``/``--token``. Refusals come back as one line: the hub's status and message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from hub.cli.consoles import make_console
from hub.cli.hubserver import hub_app
from hub.cli.options import HubOpt, TokenOpt
from hub.env import UsageError

__all__ = ["bounty_app"]

console = make_console(markup=False)
bounty_app = typer.Typer(
    name="bounty", help="Bounties on a hub: create, claim, submit, review, pay.", no_args_is_help=True
)
hub_app.add_typer(bounty_app, name="bounty")

IdArg = typer.Argument(..., help="The bounty's number.", min=1)
NoteOpt = typer.Option("", "--note", help="Why (shown in the bounty's history).")
JsonOpt = typer.Option(False, "--json", help="Print the hub's JSON.")


def _call(hub: str | None, token: str | None, path: str, body: dict[str, Any] | None = None) -> Any:
    from hub.client import hub_request, hub_settings

    url, tok = hub_settings(hub, token)
    if body is not None and not tok:
        raise UsageError("this needs a token: run `verihub login --hub URL` or pass --token")
    method = "POST" if body is not None else "GET"
    return hub_request(url, path, token=tok, method=method, json_body=body, timeout=60.0)


def _when(stamp: str | None) -> str:
    return f"{stamp[:10]} {stamp[11:16]} UTC" if stamp else "-"


def _version(v: dict[str, Any] | None) -> str:
    if v is None:
        return "none"
    return "a private version" if v["private"] else f"{v['ref']} (automatic review: {v['review_state']})"


def _summary(b: dict[str, Any]) -> str:
    claim = f", claimed by {b['claimant']}" if b["claimant"] else ""
    return f"#{b['id']} [{b['state']}] {b['title']} (reward {b['reward']}, due {_when(b['deadline'])}{claim})"


def _action(action: str, bounty_id: int, hub: str | None, token: str | None, **fields: str) -> None:
    b = _call(hub, token, f"/api/v1/bounties/{bounty_id}/{action}", {k: v for k, v in fields.items() if v})
    if action == "payout":
        console.print(f"payout of bounty #{b['id']} recorded (the bounty stays {b['state']})", soft_wrap=True)
    else:
        console.print(f"bounty #{b['id']} is {b['state']} now", soft_wrap=True)
    if b.get("claim_expires_at") and b["state"] == "claimed":
        console.print(f"the claim expires {_when(b['claim_expires_at'])}", soft_wrap=True)


@bounty_app.command("create")
def create_cmd(
    title: str = typer.Option(..., "--title", help="A one-line title."),
    reward: str = typer.Option(..., "--reward", help="The reward, as text (e.g. '500 EUR')."),
    deadline: str = typer.Option(..., "--deadline", help="YYYY-MM-DD (end of that day, UTC) or ISO time."),
    spec: str = typer.Option(None, "--spec", help="The specification (Markdown)."),
    spec_file: Path = typer.Option(None, "--spec-file", help="Read the specification from this file."),
    claim_days: float = typer.Option(7.0, "--claim-days", min=0.0, help="How long a claim lasts."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Create a bounty (a reviewer or admin, with a token of scope review)."""
    if (spec is None) == (spec_file is None):
        raise UsageError("give the specification with --spec TEXT or --spec-file FILE")
    text = spec if spec is not None else spec_file.read_text(encoding="utf-8")
    body = {"title": title, "spec": text, "reward": reward, "deadline": deadline, "claim_days": claim_days}
    b = _call(hub, token, "/api/v1/bounties", body)
    console.print(f"bounty #{b['id']} created: {b['title']} ({b['url']})", soft_wrap=True)


@bounty_app.command("list")
def list_cmd(
    state: str = typer.Option("", "--state", help="Only bounties in this state."),
    as_json: bool = JsonOpt,
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """The bounties on the hub, newest first."""
    path = "/api/v1/bounties" + (f"?state={state}" if state else "")
    rows = _call(hub, token, path)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for b in rows:
        console.print(_summary(b), soft_wrap=True)
    if not rows:
        console.print("no bounty" + (f" is {state}" if state else ""))


@bounty_app.command("show")
def show_cmd(
    bounty_id: int = IdArg, as_json: bool = JsonOpt, hub: str = HubOpt, token: str = TokenOpt
) -> None:
    """One bounty: its state, claim, submission, payout and history."""
    b = _call(hub, token, f"/api/v1/bounties/{bounty_id}")
    if as_json:
        print(json.dumps(b, indent=2))
        return
    console.print(_summary(b), soft_wrap=True)
    if b["claim_expires_at"]:
        console.print(f"claim expires: {_when(b['claim_expires_at'])}")
    console.print(f"submission: {_version(b['submission'])}", soft_wrap=True)
    if b["payout"]:
        p = b["payout"]
        console.print(f"payout: {p['amount']} to {p['recipient']} ({p['reference']}), recorded by "
                      f"{p['recorded_by']} {_when(p['recorded_at'])}", soft_wrap=True)  # fmt: skip
    for e in b["events"]:
        move = f"{e['from'] or 'new'} -> {e['to']}"
        note = f": {e['note']}" if e["note"] else ""
        console.print(
            f"  {_when(e['at'])} {e['actor'] or 'the hub'} {e['action']} ({move}){note}", soft_wrap=True
        )


@bounty_app.command("claim")
def claim_cmd(bounty_id: int = IdArg, hub: str = HubOpt, token: str = TokenOpt) -> None:
    """Claim an open bounty (one claimant at a time; the claim expires)."""
    _action("claim", bounty_id, hub, token)


@bounty_app.command("unclaim")
def unclaim_cmd(
    bounty_id: int = IdArg, note: str = NoteOpt, hub: str = HubOpt, token: str = TokenOpt
) -> None:
    """Give a claim back (the claimant, or a reviewer)."""
    _action("unclaim", bounty_id, hub, token, note=note)


@bounty_app.command("submit")
def submit_cmd(
    bounty_id: int = IdArg,
    ref: str = typer.Argument(..., help="The pushed version: OWNER/ID@VERSION."),
    note: str = NoteOpt,
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Submit a pushed version for a bounty you claimed (the hub's review result follows)."""
    _action("submit", bounty_id, hub, token, ref=ref, note=note)


@bounty_app.command("review")
def review_cmd(bounty_id: int = IdArg, note: str = NoteOpt, hub: str = HubOpt, token: str = TokenOpt) -> None:
    """Take a submission whose automatic review passed into human review (a reviewer)."""
    _action("review", bounty_id, hub, token, note=note)


@bounty_app.command("accept")
def accept_cmd(
    bounty_id: int = IdArg,
    note: str = typer.Option(..., "--note", help="Why it is accepted."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Accept a submission under review (a reviewer who is not the claimant)."""
    _action("accept", bounty_id, hub, token, note=note)


@bounty_app.command("reject")
def reject_cmd(
    bounty_id: int = IdArg,
    note: str = typer.Option(..., "--note", help="Why it is rejected."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Reject a submission under review (a reviewer who is not the claimant)."""
    _action("reject", bounty_id, hub, token, note=note)


@bounty_app.command("reopen")
def reopen_cmd(bounty_id: int = IdArg, note: str = NoteOpt, hub: str = HubOpt, token: str = TokenOpt) -> None:
    """Open a rejected or failed bounty to new claims (a reviewer)."""
    _action("reopen", bounty_id, hub, token, note=note)


@bounty_app.command("payout")
def payout_cmd(
    bounty_id: int = IdArg,
    reference: str = typer.Option(..., "--reference", help="The payment's reference."),
    amount: str = typer.Option("", "--amount", help="Amount paid (default: the reward)."),
    recipient: str = typer.Option("", "--recipient", help="Who was paid (default: the claimant)."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Record the payout of an accepted bounty (a reviewer)."""
    _action("payout", bounty_id, hub, token, reference=reference, amount=amount, recipient=recipient)
