"""Options and parsers that several commands share, defined once."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from hub.env import UsageError

__all__ = ["EnvArgOpt", "HubOpt", "TokenOpt", "flags_command", "parse_env_args"]

F = TypeVar("F")

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


def flags_command(
    flags_type: type[F],
) -> Callable[[Callable[[typer.Context, F], None]], Callable[..., None]]:
    """Turn ``body(ctx, flags)`` into a command whose parameters are the fields of the dataclass
    ``flags_type`` (each field's default a ``typer.Option`` or ``typer.Argument``, in ``--help``
    order); the command builds one ``flags_type`` from what it was given and calls ``body``."""
    hints = typing.get_type_hints(flags_type)
    fields = dataclasses.fields(flags_type)  # type: ignore[arg-type]  # a dataclass, by contract
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    params += [
        inspect.Parameter(f.name, keyword, default=f.default, annotation=hints[f.name]) for f in fields
    ]

    def wrap(body: Callable[[typer.Context, F], None]) -> Callable[..., None]:
        @functools.wraps(body)
        def command(ctx: typer.Context, **given: Any) -> None:
            body(ctx, flags_type(**given))

        # typer reads a command's parameters from its signature and type hints
        command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        command.__annotations__ = {**{f.name: hints[f.name] for f in fields}, "ctx": typer.Context}
        return command

    return wrap
