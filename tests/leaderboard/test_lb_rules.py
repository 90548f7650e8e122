"""Leaderboard rules: settings never mixed, overlapping intervals tied,
identical runs shown once, human labels, filters, and the infrastructure-error flag."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hub.env import Sampling
from leaderboard import (
    Board,
    MixedSettingsError,
    RunFilter,
    aggregate,
    build_site,
    infra_check,
    rank,
    rankings,
)
from leaderboard.entry import BoardEntry
from leaderboard.settings import SERVER_DEFAULT, sampling_text, settings_key
from leaderboard.site import env_page_name
from leaderboard.testing import write_run

STRONG = ((1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (1.0, 0.0))  # mean 0.875
WEAK = ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (1.0, 0.0))  # mean 0.125
MID = ((1.0, 0.0), (1.0, 1.0), (0.0, 0.0), (0.5, 1.0))


def _add(board: Board, tmp: Path, name: str, **kw: object) -> BoardEntry:
    entry, added = board.add(write_run(tmp / name, **kw))  # type: ignore[arg-type]
    assert added
    return entry


# -- settings -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "other",
    [
        {"rewards": MID + MID},  # 8 tasks instead of 4: the "10x2 vs 20x2" case
        {"rewards": tuple(r + r for r in MID)},  # 4 rollouts per task instead of 2
        {"sampling": Sampling(temperature=0.0, max_tokens=64)},
        {"sampling": Sampling(temperature=0.7, max_tokens=4096)},
        {"sampling": Sampling(temperature=None, max_tokens=64)},
        {"env_version": "2.0.0"},
    ],
)
def test_runs_of_other_settings_never_share_a_ranking(tmp_path: Path, other: dict[str, object]) -> None:
    board = Board(tmp_path / "board")
    a = _add(board, tmp_path, "a", model="a", rewards=MID)
    b = _add(board, tmp_path, "b", model="b", seed=1, **other)
    assert settings_key(a) != settings_key(b)
    with pytest.raises(MixedSettingsError, match="compare=True"):
        rank([a, b])
    tables = rankings([a, b])
    assert len(tables) == 2 and all(len(t.rows) == 1 for t in tables)
    (env,) = aggregate([a, b])
    assert len(env.columns) == 2  # the site's environment page keeps them apart too
    mixed = rankings([a, b], compare=True)
    assert len(mixed) == 1 and mixed[0].mixed and len(mixed[0].rows) == 2


def test_the_seed_alone_does_not_split_a_ranking(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    a = _add(board, tmp_path, "a", model="a", rewards=MID)
    b = _add(board, tmp_path, "b", model="b", rewards=STRONG, seed=5)
    assert settings_key(a) == settings_key(b)
    assert not rank([a, b]).mixed


# -- ties ---------------------------------------------------------------------------------------
def _entry(board: Board, tmp: Path, name: str, rewards: object, seed: int) -> BoardEntry:
    return _add(board, tmp, name, model=name, rewards=rewards, seed=seed)


def test_overlapping_intervals_are_tied_and_separated_ones_ranked(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    strong = _entry(board, tmp_path, "strong", STRONG, 0)
    close = _entry(board, tmp_path, "close", ((1.0, 1.0), (1.0, 1.0), (1.0, 0.0), (1.0, 0.0)), 1)
    weak = _entry(board, tmp_path, "weak", WEAK, 2)
    assert strong.ci95 and close.ci95 and weak.ci95
    assert strong.ci95[0] <= close.ci95[1]  # the premise: they overlap
    assert weak.ci95[1] < close.ci95[0]  # and weak is clearly below both
    rows = rank([weak, strong, close]).rows
    assert [(r.name, r.rank, r.tied, r.rank_text) for r in rows] == [
        ("strong", 1, True, "=1"),
        ("close", 1, True, "=1"),
        ("weak", 3, False, "3"),
    ]


def test_ties_chain_through_overlaps(tmp_path: Path) -> None:
    """a overlaps b and b overlaps c: one group of ties, even though a and c do not overlap."""
    board = Board(tmp_path / "board")
    rows = [
        _entry(board, tmp_path, "a", ((1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (0.0, 1.0)), 0),
        _entry(board, tmp_path, "b", ((1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0)), 1),
        _entry(board, tmp_path, "c", ((0.0, 0.0), (0.0, 0.0), (1.0, 0.0), (1.0, 0.0)), 2),
    ]
    a, b, c = (r.ci95 for r in rows)
    assert a and b and c and a[0] <= b[1] and b[0] <= c[1] and c[1] < a[0]
    assert {r.rank_text for r in rank(rows).rows} == {"=1"}


def test_a_run_without_a_score_has_no_rank(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    scored = _entry(board, tmp_path, "s", STRONG, 0)
    unscored = _entry(board, tmp_path, "u", ((None, None), (None, None), (None, None), (None, None)), 1)
    rows = rank([unscored, scored]).rows
    assert [(r.name, r.rank_text) for r in rows] == [("s", "1"), ("u", "–")]


# -- identical runs and names ---------------------------------------------------------------------
def test_identical_runs_are_one_row_not_two_hash_named_rows(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    first = _add(board, tmp_path, "a", model="m", rewards=MID, seed=0)
    again = _add(board, tmp_path, "b", model="m", rewards=MID, seed=1)  # another run, same results
    other = _add(board, tmp_path, "c", model="other", rewards=STRONG, seed=2)
    rows = rank([first, again, other]).rows
    assert [(r.name, len(r.entries)) for r in rows] == [("other", 1), ("m", 2)]
    build_site(board, tmp_path / "site")
    page = (tmp_path / "site" / "env" / env_page_name("toy")).read_text()
    assert "×2 identical runs" in page
    for entry in (first, again):
        assert entry.id[-6:] not in re.sub(r'href="[^"]*"', "", page)  # no hash-fragment names


def test_rows_of_one_model_are_told_apart_by_seed_or_label(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    a = _add(board, tmp_path, "a", model="m", rewards=MID, seed=0)
    b = _add(board, tmp_path, "b", model="m", rewards=STRONG, seed=1)
    assert sorted(r.name for r in rank([a, b]).rows) == ["m (seed 0)", "m (seed 1)"]
    labelled = board.set_label(b.id, "  m, after   the fix ")
    assert labelled.label == "m, after the fix"
    assert sorted(r.name for r in rank([a, labelled]).rows) == ["m", "m, after the fix"]
    assert board.check() == []  # a label is not a tampered number
    assert board.set_label(b.id, " ").label is None


def test_a_hostile_label_is_escaped(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry, _ = board.add(write_run(tmp_path / "r"), label="<script>alert(1)</script>", owner="<b>x</b>")
    build_site(board, tmp_path / "site")
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text()
        assert "<script" not in text and "<b>x" not in text, page
    assert "&lt;script&gt;alert(1)" in (tmp_path / "site" / "run" / f"{entry.id}.html").read_text()


# -- filters ------------------------------------------------------------------------------------
def test_filters_by_model_owner_and_date(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    for i, (model, owner) in enumerate([("m1", "alice"), ("m2", "bob"), ("m1", "bob")]):
        board.add(write_run(tmp_path / f"r{i}", model=model, rewards=MID, seed=i), owner=owner)
    entries = board.entries()

    def models(f: RunFilter) -> list[tuple[str, str | None]]:
        return sorted((e.model, e.owner) for e in f.apply(entries))

    assert models(RunFilter(models=frozenset({"m1"}))) == [("m1", "alice"), ("m1", "bob")]
    assert models(RunFilter(owners=frozenset({"bob"}))) == [("m1", "bob"), ("m2", "bob")]
    start = min(e.created_at for e in entries)
    assert models(RunFilter(since=start + 1)) == [("m1", "bob"), ("m2", "bob")]
    assert models(RunFilter(until=start)) == [("m1", "alice")]
    assert [len(t.rows) for t in rankings(entries, run_filter=RunFilter(owners=frozenset({"bob"})))] == [2]


# -- sampling shown in full ---------------------------------------------------------------------
def test_an_unset_temperature_reads_server_default_never_none(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry, _ = board.add(write_run(tmp_path / "r", sampling=Sampling(temperature=None, max_tokens=64)))
    assert entry.sampling["temperature"] is None  # recorded faithfully: the server chose
    assert sampling_text(entry.sampling).startswith(f"temperature={SERVER_DEFAULT}, top_p={SERVER_DEFAULT}")
    build_site(board, tmp_path / "site")
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text()
        assert "=None" not in text and ">None<" not in text, page
    assert f"temperature={SERVER_DEFAULT}" in (tmp_path / "site" / "run" / f"{entry.id}.html").read_text()


# -- infrastructure errors ----------------------------------------------------------------------
def test_runs_with_many_infrastructure_errors_are_flagged(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    clean = _add(board, tmp_path, "clean", model="clean", rewards=MID)
    broken = _add(
        board,
        tmp_path,
        "broken",
        model="broken",
        rewards=((None, 1.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)),
        seed=1,
    )
    assert broken.errors_by_kind == {"model": 1} and broken.n_errors == 1
    check = infra_check(broken)
    assert check.share == pytest.approx(1 / 8) and check.flagged  # 12.5% > 5%
    assert not infra_check(broken, threshold=0.2).flagged
    assert not infra_check(clean).flagged
    assert not infra_check(broken, kinds={"grader"}).flagged  # only the kinds asked for count
    rows = {r.name: r for r in rank([clean, broken]).rows}
    assert rows["broken"].infra.flagged and not rows["clean"].infra.flagged
    assert not rank([clean, broken], infra_threshold=0.5).rows[0].infra.flagged
    build_site(board, tmp_path / "site")
    page = (tmp_path / "site" / "env" / env_page_name("toy")).read_text()
    assert page.count("high infra errors") == 1
    build_site(board, tmp_path / "lenient", infra_threshold=0.5)
    assert "high infra errors" not in (tmp_path / "lenient" / "env" / env_page_name("toy")).read_text()


def test_an_entry_without_errors_by_kind_counts_every_error(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    entry = _add(board, tmp_path, "r", rewards=((None, None), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)))
    old = entry.model_copy(update={"errors_by_kind": {}})  # as added by an older verihub
    assert infra_check(old).n_errors == 2 and infra_check(old, kinds={"grader"}).n_errors == 2


def test_a_hand_edited_errors_by_kind_is_caught(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    _add(board, tmp_path, "r", rewards=((None, 1.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)))
    index = board.index_path
    data = json.loads(index.read_text())
    data["entries"][0]["errors_by_kind"] = {"grader": 1}
    index.write_text(json.dumps(data))
    assert any("errors_by_kind" in p for p in board.check())


# -- the command line ---------------------------------------------------------------------------
def test_cli_labels_filters_and_ties(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hub.cli.leaderboard  # noqa: F401  (registers the sub-app)
    from hub.cli import main

    def cli(*args: str) -> int:
        with pytest.raises(SystemExit) as info:
            main(list(args))
        return info.value.code if isinstance(info.value.code, int) else 1

    monkeypatch.setenv("COLUMNS", "200")
    board = str(tmp_path / "board")
    a = write_run(tmp_path / "a", model="m1", rewards=STRONG)
    b = write_run(tmp_path / "b", model="m2", rewards=WEAK, seed=1)
    c = write_run(tmp_path / "c", model="m2", rewards=WEAK, seed=2)  # identical to b
    assert cli("leaderboard", "add", str(a), "--board", board, "--label", "best try", "--owner", "ann") == 0
    assert cli("leaderboard", "add", str(b), str(c), "--board", board, "--owner", "bob") == 0
    capsys.readouterr()
    assert cli("leaderboard", "show", "--board", board) == 0
    out = capsys.readouterr().out
    assert "best try" in out and "m2 (x2 identical runs)" in out
    assert cli("leaderboard", "show", "--board", board, "--owner", "ann") == 0
    out = capsys.readouterr().out
    assert "best try" in out and "m2" not in out
    assert cli("leaderboard", "show", "--board", board, "--since", "2100-01-01") == 1
    assert "match" in capsys.readouterr().err
    assert cli("leaderboard", "show", "--board", board, "--since", "yesterday") == 1
    assert "YYYY-MM-DD" in capsys.readouterr().err
    entry_id = next(e.id for e in Board(board).entries() if e.model == "m1")
    assert cli("leaderboard", "label", entry_id, "renamed", "--board", board) == 0
    assert "labelled 'renamed'" in capsys.readouterr().out
    assert cli("leaderboard", "label", "nope", "x", "--board", board) == 1
    assert "no entry 'nope'" in capsys.readouterr().err
    assert cli("leaderboard", "build", "--out", str(tmp_path / "site"), "--board", board) == 0
    assert "renamed" in (tmp_path / "site" / "env" / env_page_name("toy")).read_text()


# -- across environments ------------------------------------------------------------------------
def test_models_across_environments_use_each_current_ranking_and_never_average(tmp_path: Path) -> None:
    from leaderboard import cross_environment, render_cross

    board = Board(tmp_path / "board")
    _add(board, tmp_path, "a1", env_id="alpha-env", model="m1", rewards=STRONG)
    _add(board, tmp_path, "a2", env_id="alpha-env", model="m2", rewards=WEAK, seed=1)
    _add(board, tmp_path, "old", env_id="alpha-env", env_version="0.1.0", model="m3", rewards=STRONG, seed=2)
    _add(board, tmp_path, "b1", env_id="beta-env", model="m2", rewards=STRONG, seed=3)
    cross = cross_environment(board.entries())
    assert [(c.env_id, c.env_version) for c in cross.columns] == [
        ("alpha-env", "1.0.0"),
        ("beta-env", "1.0.0"),
    ]
    table = {model: cells for model, cells in cross.rows}
    assert list(table) == ["m2", "m1"]  # m2 covers two environments; m3 only ran a stale version
    m1_alpha, m1_beta = table["m1"]
    m2_alpha, m2_beta = table["m2"]
    assert m1_beta is None and m1_alpha is not None and m2_alpha is not None and m2_beta is not None
    assert m1_alpha.rank_text == "1" and m2_alpha.rank_text == "2" and m2_beta.rank_text == "1"
    html = render_cross(cross, env_href=lambda i: f"/e/{i}", run_href=lambda i: f"/r/{i}")
    assert "not averaged" in html and 'href="/e/beta-env"' in html
    build_site(board, tmp_path / "site")
    assert "Models across environments" in (tmp_path / "site" / "index.html").read_text()


def test_the_environment_fragment_takes_the_callers_links(tmp_path: Path) -> None:
    """What the hub server renders: the same rankings and plots, linked to its own routes."""
    from leaderboard import render_environment

    board = Board(tmp_path / "board")
    a = _add(board, tmp_path, "a", model="<b>m1</b>", rewards=STRONG)
    _add(board, tmp_path, "b", model="m2", rewards=WEAK, seed=1)
    (env,) = aggregate(board.entries())
    summaries = {e.id: board.load_summary(e) for e in board.entries()}
    html = render_environment(
        env, summaries, run_href=lambda i: f"/runs/{i}", card_href=lambda e, v: f"/envs/{e}/{v}/card"
    )
    assert f'href="/runs/{a.id}"' in html and 'href="/envs/toy/1.0.0/card"' in html
    assert "<b>" not in html and "&lt;b&gt;m1" in html and html.count("<svg") == 3
    assert "<html" not in html  # a fragment, for the server's own page
