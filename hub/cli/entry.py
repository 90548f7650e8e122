"""The ``verihub`` entry point: registers every command module, runs the app, maps errors to one line."""

from __future__ import annotations

import sys

import typer

from hub.cli.app import app
from hub.cli.extras import missing_module_message
from hub.env import RunInterrupted, VerihubError

__all__ = ["main"]

#: A missing module of verihub itself is a broken install, not a missing extra.
_OWN_PACKAGES = frozenset({"hub", "graders", "leaderboard", "verihub_v1"})


def _register() -> None:
    from hub.cli import (  # noqa: F401  (they add commands)
        author,
        authoring,
        bounty,
        envs,
        export,
        fidelity,
        hubcmds,
        hubeval,
        hubserver,
        labels,
        leaderboard,
        results,
        run,
        serve,
        synth,
        tokens,
    )


def _error(message: str, code: int) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``verihub`` script: one-line errors, no tracebacks, exit codes.

    Exit codes: 0 ok, 1 a verihub error (bad input, failed model), 2 bad command-line usage,
    130 interrupted.
    """
    _register()
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=argv, prog_name="verihub", standalone_mode=False)
    except RunInterrupted as exc:
        _error(str(exc), 130)
    except VerihubError as exc:
        _error(" ".join(str(exc).split()), 1)
    except KeyboardInterrupt:
        _error("interrupted", 130)
    except ModuleNotFoundError as exc:  # an optional dependency this install lacks: name its extra
        if not exc.name or exc.name.split(".", 1)[0] in _OWN_PACKAGES:
            raise
        _error(missing_module_message(exc.name), 1)
    except OSError as exc:  # a file or folder the user named cannot be used
        where = f": {exc.filename}" if exc.filename else ""
        _error(f"{exc.strerror or exc}{where}", 1)
    except Exception as exc:
        # click's (or typer's vendored click's) usage errors: duck-typed to work with both.
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)
        if type(exc).__name__ == "Abort":
            _error("aborted", 130)
        fmt = getattr(exc, "format_message", None)
        if fmt is None:
            raise
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see `{ctx.command_path} --help`)"
        _error(" ".join(fmt().split()) + hint, int(getattr(exc, "exit_code", 2)))
    sys.exit(rv if isinstance(rv, int) else 0)
