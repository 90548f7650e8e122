"""A command lacking an optional dependency names the extra that provides it, in one line."""

from __future__ import annotations

import pytest

from hub.cli import entry
from hub.cli.extras import extra_for_module, missing_module_message

REQUIRES = [
    "typer>=0.12",
    "markdown-it-py>=3.0",
    'xllamacpp==2026.10.11549; extra == "local"',
    'starlette>=0.37; extra == "hub"',
    'markdown-it-py>=3.0; extra == "hub"',
    'psycopg[binary]>=3.1; extra == "hub"',
    'pytest>=8; extra == "dev"',
    'mcp>=1.20; extra == "mcp"',
    'tomli>=1.1; python_version < "3.11"',
]


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("starlette", "hub"),
        ("starlette.routing", "hub"),
        ("xllamacpp", "local"),
        ("psycopg", "hub"),
        ("mcp.client.stdio", "mcp"),
        ("markdown_it", "hub"),  # a base dependency too, but the first extra naming it is given
        ("pytest", None),  # the tests' extra is never suggested
        ("typer", None),  # a base dependency: a broken install, no extra helps
        ("tomli", None),  # a marker without an extra
        ("nonexistent_module", None),
    ],
)
def test_extra_for_module(module: str, extra: str | None) -> None:
    assert extra_for_module(module, REQUIRES) == extra


def test_message_names_the_install_command() -> None:
    assert "pip install 'verihub[hub]'" in missing_module_message("starlette", REQUIRES)
    assert "verihub[" not in missing_module_message("foo", REQUIRES)


def test_installed_metadata_knows_the_server_extra() -> None:
    assert extra_for_module("starlette") == "hub"
    assert extra_for_module("xllamacpp") == "local"


def test_entry_point_turns_a_missing_extra_into_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fake_main(**_kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'starlette'", name="starlette")

    class FakeCommand:
        main = staticmethod(fake_main)

    monkeypatch.setattr(entry.typer.main, "get_command", lambda _app: FakeCommand())
    with pytest.raises(SystemExit) as exc:
        entry.main(["hub", "serve"])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install 'verihub[hub]'" in err


def test_a_missing_module_of_verihub_itself_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_main(**_kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'hub.nothing'", name="hub.nothing")

    class FakeCommand:
        main = staticmethod(fake_main)

    monkeypatch.setattr(entry.typer.main, "get_command", lambda _app: FakeCommand())
    with pytest.raises(ModuleNotFoundError):
        entry.main(["eval"])
