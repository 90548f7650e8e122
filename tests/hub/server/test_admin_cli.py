"""``verihub hub ...`` administration on a data folder: it must be named, an empty folder is not
turned into a hub by accident, and ``hub migrate`` says what it did."""

from __future__ import annotations

from pathlib import Path

import pytest


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


@pytest.mark.parametrize(
    "args",
    [
        ("hub", "status", "alice/arith"),
        ("hub", "yank", "alice/arith@0.1.0", "--reason", "x"),
        ("hub", "gc"),
        ("hub", "backfill-rollouts"),
    ],
)
def test_admin_commands_need_a_named_data_folder(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VERIHUB_HUB_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, *args)
    assert code != 0 and "--data DIR" in err and "verihub status" in err
    assert not (tmp_path / "hub-data").exists()  # nothing created by accident


def test_admin_commands_do_not_create_an_empty_hub(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "nohub"
    data.mkdir()
    code, _, err = cli(capsys, "hub", "status", "alice/arith", "--data", str(data))
    assert code != 0 and "no hub.db" in err and "hub migrate" in err
    assert not (data / "hub.db").exists()


def test_migrate_says_whether_it_created_or_found_the_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "hub"
    code, out, _ = cli(capsys, "hub", "migrate", "--data", str(data))
    assert code == 0 and "created the hub database schema" in out
    code, out, _ = cli(capsys, "hub", "migrate", "--data", str(data))
    assert code == 0 and "already at the newest revision" in out
    code, out, _ = cli(capsys, "hub", "user", "add", "rev", "--reviewer", "--data", str(data))
    assert code == 0 and "--scope review" in out
