"""The ``verihub`` command line. Commands live in one module per area; errors are one line."""

from __future__ import annotations

import sys

import click
import typer
from rich.console import Console

from hub.errors import VerihubError

__all__ = ["app", "main"]

app = typer.Typer(
    name="verihub",
    help="verihub: verifier-based environments for evaluating and training LLMs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
err_console = Console(stderr=True, highlight=False)


def _register() -> None:
    from hub.cli import envs, run  # noqa: F401  (each module adds its commands to `app`)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``verihub`` script: one-line errors, no tracebacks, exit codes."""
    _register()
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="verihub", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError:
        sys.exit(0)
    except click.ClickException as exc:
        ctx_hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            ctx_hint = f" (see `{exc.ctx.command_path} --help`)"
        err_console.print(f"error: {exc.format_message()}{ctx_hint}", markup=False)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        err_console.print("aborted", markup=False)
        sys.exit(130)
    except VerihubError as exc:
        err_console.print(f"error: {exc}", markup=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        sys.exit(130)
