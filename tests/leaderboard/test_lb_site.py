"""The static site (content, escaping, no network) and the `verihub leaderboard` commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import hub.cli.leaderboard  # noqa: F401  (registers the sub-app until hub.cli imports it itself)
from hub.cli import main
from leaderboard import Board, BoardError, build_site
from leaderboard.site import card_page_name, env_page_name
from leaderboard.testing import write_run

HOSTILE_MODEL = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
HOSTILE_TEXT = "</pre><script>alert(3)</script><iframe src='https://evil.example/'></iframe>"


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return code if isinstance(code, int) else 1


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Board, Path]:
    tmp = tmp_path_factory.mktemp("site")
    board = Board(tmp / "board")
    board.add(write_run(tmp / "r1", model="strong", rewards=((1.0, 1.0), (1.0, 0.0), (1.0, 1.0), (1.0, 1.0))))
    board.add(write_run(tmp / "r2", model=HOSTILE_MODEL, completion=HOSTILE_TEXT), copy_rollouts=True)
    board.add(write_run(tmp / "r3", env_version="0.9.0", model="legacy"))
    board.add(write_run(tmp / "r4", env_id="other env/../x", model="strong"))
    out = tmp / "out"
    build_site(board, out, sample=5)
    return board, out


def _pages(out: Path) -> list[Path]:
    return sorted(out.rglob("*.html"))


@pytest.mark.slow
def test_one_page_per_environment_and_run(site: tuple[Board, Path]) -> None:
    board, out = site
    names = {p.relative_to(out).as_posix() for p in _pages(out)}
    assert "index.html" in names
    assert f"env/{env_page_name('toy')}" in names
    assert f"env/{env_page_name('other env/../x')}" in names
    assert all(f"run/{e.id}.html" in names for e in board.entries())
    cards = {
        card_page_name("toy", "1.0.0"),
        card_page_name("toy", "0.9.0"),
        card_page_name("other env/../x", "1.0.0"),
    }
    assert {f"card/{c}" for c in cards} <= names
    assert len(names) == 1 + 2 + 3 + 4


def test_environment_page_ranks_and_marks_stale(site: tuple[Board, Path]) -> None:
    _, out = site
    html = (out / "env" / env_page_name("toy")).read_text()
    current, stale = html.split("version 0.9.0")
    assert current.index("strong") < current.index("&lt;script&gt;alert(1)")
    assert "legacy" not in current and "legacy" in stale
    assert "stale: v1.0.0 is newer" in stale
    assert html.count("<svg") == 6  # three plots per version column
    for caption in ("Mean reward, 95% bootstrap interval", "pass@k", "pass-rate histogram"):
        assert caption in html


def test_run_page_shows_config_and_graded_transcripts(site: tuple[Board, Path]) -> None:
    board, out = site
    entry = next(e for e in board.entries() if e.model == HOSTILE_MODEL)
    html = (out / "run" / f"{entry.id}.html").read_text()
    for needle in (entry.env_hash, "temperature=0.7", "verihub version", "sha256 rollouts.jsonl", "pass@2"):
        assert needle in html
    assert html.count("<details>") == 4
    assert "compared with the reference" in html  # the grade's reason
    assert "&lt;/pre&gt;&lt;script&gt;alert(3)" in html


def test_hostile_text_never_becomes_markup(site: tuple[Board, Path]) -> None:
    _, out = site
    for page in _pages(out):
        html = page.read_text()
        assert "<script" not in html.lower(), page
        assert "<iframe" not in html.lower(), page
        assert "<img" not in html.lower(), page
        assert "Content-Security-Policy" in html
        # nothing is fetched from anywhere: no src=/href= to a network address
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), page


def test_transcripts_missing_when_rollouts_moved(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry, _ = board.add(write_run(tmp_path / "run"))
    build_site(board, tmp_path / "s1")
    assert (tmp_path / "s1" / "run" / f"{entry.id}.html").read_text().count("<details>") == 4
    (tmp_path / "run" / "rollouts.jsonl").rename(tmp_path / "run" / "moved.jsonl")
    build_site(board, tmp_path / "s2")
    html = (tmp_path / "s2" / "run" / f"{entry.id}.html").read_text()
    assert "<details>" not in html
    assert "rollouts are not available" in html


def test_build_refuses_a_board_edited_after_add(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry, _ = board.add(write_run(tmp_path / "r"))
    cfg = board.entry_dir(entry) / "config.json"
    cfg.write_text(cfg.read_text().replace('"seed": 0', '"seed": 1'))
    with pytest.raises(BoardError, match="config.json was changed"):
        build_site(board, tmp_path / "out")


def test_cli_add_show_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    board = str(tmp_path / "board")
    good = write_run(tmp_path / "good", model="model-good")
    bad = write_run(tmp_path / "bad", model="model-bad")
    (bad / "rollouts.jsonl").write_text("".join((bad / "rollouts.jsonl").read_text().splitlines(True)[1:]))

    assert run_cli("leaderboard", "add", str(good), str(bad), "--board", board) == 1
    captured = capsys.readouterr()
    assert "added toy-1.0.0-model-good" in captured.out
    assert f"refused {bad}" in captured.err
    assert "rollouts missing" in captured.err
    assert "error: 1 of 2 runs refused" in captured.err

    assert run_cli("leaderboard", "show", "--board", board) == 0
    out = capsys.readouterr().out
    assert "model-good" in out and "model-bad" not in out

    assert run_cli("leaderboard", "show", "--env", "nope", "--board", board) == 1
    assert "no runs of 'nope'" in capsys.readouterr().err

    priced = write_run(tmp_path / "priced", model="model-priced")
    assert run_cli("leaderboard", "add", str(priced), "--board", board, "--price-in", "3") == 1
    assert "give both --price-in and --price-out" in capsys.readouterr().err
    argv = ["leaderboard", "add", str(priced), "--board", board, "--price-in", "3", "--price-out", "15"]
    assert run_cli(*argv) == 0
    capsys.readouterr()
    (entry,) = [e for e in Board(board).entries() if e.model == "model-priced"]
    assert entry.cost_usd == pytest.approx((80 * 3.0 + 40 * 15.0) / 1e6)

    site = tmp_path / "site"
    assert run_cli("leaderboard", "build", "--out", str(site), "--board", board) == 0
    assert (site / "index.html").is_file()
    assert "wrote 5 pages" in capsys.readouterr().out  # index, environment, eval card, two runs


def test_cli_build_on_empty_board_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli("leaderboard", "build", "--out", str(tmp_path / "s"), "--board", str(tmp_path / "b"))
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "verihub leaderboard add" in err


def test_cli_show_refuses_a_hand_edited_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`show` prints what `build` would publish, so it runs the same board check."""
    board = tmp_path / "board"
    run = write_run(tmp_path / "r", model="m")
    assert run_cli("leaderboard", "add", str(run), "--board", str(board)) == 0
    index = board / "index.json"
    data = json.loads(index.read_text())
    data["entries"][0]["mean_reward"] = 0.99
    index.write_text(json.dumps(data))
    capsys.readouterr()
    assert run_cli("leaderboard", "show", "--board", str(board)) == 1
    err = capsys.readouterr().err
    assert "modified after runs were added" in err and "mean_reward" in err
