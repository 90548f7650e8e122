"""``verihub tokens list|create|revoke|sign-out-everywhere``: one's own tokens and browser sessions
on the hub one is logged in to (the API behind the hub's settings page)."""

from __future__ import annotations

import sys

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import HubOpt, TokenOpt

__all__ = ["tokens_app"]

console = make_console()

tokens_app = typer.Typer(
    name="tokens", help="Your own tokens and sessions on a hub.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(tokens_app, name="tokens")


@tokens_app.command("list")
def list_cmd(hub: str = HubOpt, token: str = TokenOpt) -> None:
    """Your tokens: id, scope, created, expiry, state (never a secret)."""
    from hub.client import hub_settings, list_tokens

    url, tok = hub_settings(hub, token)
    for t in list_tokens(url, token=tok):
        console.print(
            f"vh_{t['id']}  {t['scope']:<6}  {t['state']:<7}  created {t['created_at']}  "
            f"expires {t['expires_at'] or 'never'}",
            soft_wrap=True,
        )


@tokens_app.command("create")
def create_cmd(
    scope: str = typer.Option("read", "--scope", help="read, push, review or admin (at most your token's)."),
    expires_days: float = typer.Option(
        None, "--expires-days", help="Days until it expires (default: never)."
    ),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Make a token of yours; it is printed once."""
    from hub.client import create_token, hub_settings

    url, tok = hub_settings(hub, token)
    answer = create_token(url, scope, expires_days=expires_days, token=tok)
    print(answer["token"])
    sys.stderr.write("this token is shown once; store it now\n")


@tokens_app.command("revoke")
def revoke_cmd(
    token_id: str = typer.Argument(..., help="The token, or its id (the 12 hex digits after vh_)."),
    hub: str = HubOpt,
    token: str = TokenOpt,
) -> None:
    """Revoke one of your tokens."""
    from hub.client import hub_settings, revoke_token

    url, tok = hub_settings(hub, token)
    answer = revoke_token(url, token_id, token=tok)
    console.print(f"token vh_{answer['id']} revoked")


@tokens_app.command("sign-out-everywhere")
def sign_out_everywhere_cmd(hub: str = HubOpt, token: str = TokenOpt) -> None:
    """End every browser session of yours on the hub (tokens stay valid)."""
    from hub.client import hub_settings, revoke_sessions

    url, tok = hub_settings(hub, token)
    console.print(f"{revoke_sessions(url, token=tok)} session(s) ended")
