"""Options and parsers that several commands share, defined once."""

from __future__ import annotations

import json

import typer

from hub.env import UsageError

__all__ = ["EnvArgOpt", "HubOpt", "TokenOpt", "parse_env_args"]

#: ``--hub``: a hub's URL, by default the one ``verihub login`` stored.
HubOpt = typer.Option(None, "--hub", help="Hub URL (default: the one you logged in to).")
#: ``--token``: a hub token, by default the stored one (or ``$VERIHUB_HUB_TOKEN``).
TokenOpt = typer.Option(None, "--token", envvar="VERIHUB_HUB_TOKEN", help="Token (default: stored).")
#: ``--env-arg NAME=VALUE``, repeatable: keyword arguments of ``load_environment``.
EnvArgOpt = typer.Option(None, "--env-arg", help="NAME=VALUE passed to load_environment (VALUE may be JSON).")


def parse_env_args(pairs: list[str] | None) -> dict[str, object]:
    """``["n=3", "name=x"]`` -> ``{"n": 3, "name": "x"}``: a VALUE that parses as JSON is JSON."""
    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--env-arg {pair!r} must look like NAME=VALUE (VALUE may be JSON)")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out
