"""The ``verihub`` Typer application that every command module adds its commands to."""

from __future__ import annotations

import typer

__all__ = ["app"]

app = typer.Typer(
    name="verihub",
    help="verihub: verifier-based environments for evaluating and training LLMs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
