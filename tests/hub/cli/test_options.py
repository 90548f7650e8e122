""":func:`hub.cli.options.flags_command`: a dataclass of flags becomes a command's parameters."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import typer
from typer.testing import CliRunner

from hub.cli.eval_flags import RUN_DEFINING, EvalFlags
from hub.cli.options import flags_command


@dataclass(frozen=True)
class _Flags:
    name: str = typer.Argument(..., help="A name.")
    count: int = typer.Option(2, "--count", "-c", min=1, help="How many.")
    tags: list[str] | None = typer.Option(None, "--tag", help="Repeatable.")
    loud: bool = typer.Option(False, "--loud/--quiet", help="Shout.")


def _app(seen: list[_Flags]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @flags_command(_Flags)
    def greet(ctx: typer.Context, flags: _Flags) -> None:
        """Greet someone."""
        seen.append(flags)
        sources = {p.name: ctx.get_parameter_source(p.name or "") for p in ctx.command.params}
        typer.echo(
            " ".join(sorted(str(n) for n, s in sources.items() if s is not None and s.name != "DEFAULT"))
        )

    return app


def test_the_command_receives_one_dataclass_of_what_was_given() -> None:
    seen: list[_Flags] = []
    result = CliRunner().invoke(_app(seen), ["bob", "-c", "3", "--tag", "a", "--tag", "b", "--loud"])
    assert result.exit_code == 0, result.output
    assert seen == [_Flags(name="bob", count=3, tags=["a", "b"], loud=True)]
    assert result.output.split() == ["count", "loud", "name", "tags"]  # the context sees each flag
    result = CliRunner().invoke(_app(seen), ["ann"])
    assert seen[-1] == _Flags(name="ann", count=2, tags=None, loud=False)


def test_the_fields_declare_the_options_help_and_checks() -> None:
    runner = CliRunner()
    help_text = runner.invoke(_app([]), ["--help"]).output
    assert "Greet someone." in help_text and "--count" in help_text and "--loud" in help_text
    refused = runner.invoke(_app([]), ["bob", "--count", "0"])
    assert refused.exit_code == 2


def test_every_run_defining_flag_of_eval_is_one_of_its_fields() -> None:
    names = {f.name for f in dataclasses.fields(EvalFlags)}
    assert set(RUN_DEFINING) <= names
