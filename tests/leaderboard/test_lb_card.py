"""Eval cards and their plots: the numbers, the difficulty histogram
with 0% and 100% tasks apart, the learnable band shared with `verihub calibrate`, the band export,
escaping, and no empty plot when every score is zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hub.env import Sampling, Task
from hub.review import calibration_from_summary, learnable_rows
from leaderboard import Board, band_export, board_card, build_site, eval_card, render_card
from leaderboard.difficulty import difficulty_bins
from leaderboard.plots import EMPTY_REASONS
from leaderboard.site import card_page_name
from leaderboard.testing import write_run

HOSTILE = "<img src=x onerror=alert(1)>"
# ten rollouts per task: pass rates 0, 0.1, 0.7, 0.8 and 1 (and a fully errored task)
RATES = {"zero": 0, "tenth": 1, "seventy": 7, "eighty": 8, "all": 10}


def _rewards(errored_task: bool = True) -> tuple[tuple[float | None, ...], ...]:
    rows: list[tuple[float | None, ...]] = [
        tuple(1.0 if i < k else 0.0 for i in range(10)) for k in RATES.values()
    ]
    if errored_task:
        rows.append((None,) * 10)
    return tuple(rows)


@pytest.fixture()
def board(tmp_path: Path) -> Board:
    b = Board(tmp_path / "board")
    ids = [*RATES, "broken"]
    b.add(write_run(tmp_path / "a", model="alpha", rewards=_rewards(), task_ids=ids), owner="alice")
    b.add(
        write_run(tmp_path / "b", model=HOSTILE, rewards=_rewards(), task_ids=ids, seed=1,
                  sampling=Sampling(temperature=None, max_tokens=64)),
    )  # fmt: skip
    b.add(write_run(tmp_path / "c", env_version="0.9.0", model="old"))
    return b


def test_the_card_holds_one_version_with_its_numbers(board: Board) -> None:
    card = board_card(board, "toy", "1.0.0")
    assert [m.model for m in card.models] == [HOSTILE, "alpha"]  # equal means: by name
    alpha = next(m for m in card.models if m.model == "alpha")
    entry = next(e for e in board.entries() if e.model == "alpha")
    assert alpha.mean_reward == entry.mean_reward == pytest.approx(26 / 50)
    assert alpha.ci95 == entry.ci95 and alpha.pass_at_k == entry.pass_at_k and alpha.pass_all_k
    assert alpha.errors_by_kind == {"model": 10} and alpha.n_errors == 10
    assert alpha.infra_flagged and alpha.infra_error_share == pytest.approx(10 / 60)
    assert alpha.usage["total_tokens"] == 50 * 15 and alpha.cost_usd is None
    assert alpha.owner == "alice"
    assert dict(alpha.sampling)["temperature"] == "0.7"
    hostile = next(m for m in card.models if m.model == HOSTILE)
    assert dict(hostile.sampling)["temperature"] == "server default"
    assert "old" not in {m.model for m in card.models}


def test_difficulty_flags_0_and_100_and_counts_the_band_as_calibrate_does(board: Board) -> None:
    alpha = next(m for m in board_card(board, "toy", "1.0.0").models if m.model == "alpha")
    assert alpha.zero_tasks == ["zero"] and alpha.full_tasks == ["all"]
    assert alpha.ungraded_tasks == ["broken"]
    assert alpha.learnable_tasks == ["tenth", "seventy"]  # 0.7 is in (at most 70%), 0.8 is not
    summary = board.load_summary(next(e for e in board.entries() if e.model == "alpha"))
    assert alpha.calibration == calibration_from_summary(summary)  # calibrate's own document
    counts = {b.label: b.count for b in alpha.histogram}
    assert counts["0%"] == 1 and counts["100%"] == 1
    assert counts["(0%, 10%]"] == 1 and counts["(60%, 70%]"] == 1 and counts["(70%, 80%]"] == 1
    assert sum(counts.values()) == 5


def test_difficulty_bins_keep_the_ends_apart() -> None:
    bins = difficulty_bins([0.0, 0.001, 0.1, 0.1000001, 0.999, 1.0, 1.0])
    assert [(b.label, b.count) for b in bins if b.count] == [
        ("0%", 1),
        ("(0%, 10%]", 2),
        ("(10%, 20%]", 1),
        ("(90%, 100%)", 1),
        ("100%", 2),
    ]
    assert bins[0].kind == "zero" and bins[-1].kind == "full"


def test_the_band_export_is_calibrates_format(board: Board) -> None:
    alpha = next(m for m in board_card(board, "toy", "1.0.0").models if m.model == "alpha")
    tasks = [Task(id=i, prompt=f"question {i}", answer=i) for i in [*RATES, "broken"]]
    lines = [json.loads(line) for line in band_export(alpha, tasks).splitlines()]
    assert [r["task_id"] for r in lines] == ["tenth", "seventy"]
    assert lines == json.loads(json.dumps(learnable_rows(alpha.calibration, tasks)))
    assert set(lines[0]) == {
        "env_id", "task_id", "prompt", "answer", "metadata", "pass_rate", "ci_low", "ci_high", "n",
    }  # fmt: skip
    assert lines[1]["pass_rate"] == pytest.approx(0.7)
    assert lines[1]["prompt"] == [{"role": "user", "content": "question seventy"}]  # as to_dataset writes it


def test_the_card_fragment_escapes_and_plots(board: Board) -> None:
    card = board_card(board, "toy", "1.0.0")
    html = render_card(card, run_href=lambda i: f"/runs/{i}", export_href=lambda m: [("json", "/x.json")])
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<svg") == 3  # reward by model, pass-rate histogram, calibration band
    assert "server default" in html and "high infra errors" in html
    assert 'href="/x.json"' in html and 'href="/runs/' in html


def test_an_all_zero_card_says_so_instead_of_an_empty_plot(tmp_path: Path) -> None:
    board = Board(tmp_path / "board")
    board.add(write_run(tmp_path / "z", model="zero", rewards=((0.0, 0.0), (0.0, 0.0))))
    board.add(write_run(tmp_path / "y", model="also-zero", rewards=((0.0, 0.0), (0.0, 0.0)), seed=1))
    card = board_card(board, "toy", "1.0.0")
    assert card.all_zero
    html = render_card(card)
    assert EMPTY_REASONS["scores"] in html and EMPTY_REASONS["band"] in html
    assert "Every model scored 0" in html
    assert html.count("<svg") == 1  # only the histogram, whose 0% bars are the information
    build_site(board, tmp_path / "site")
    env_page = next((tmp_path / "site" / "env").glob("*.html")).read_text()
    assert EMPTY_REASONS["scores"] in env_page and EMPTY_REASONS["pass_at_k"] in env_page


def test_no_runs_is_an_empty_card_not_an_error() -> None:
    card = eval_card([], env_id="<e>", env_version="1")
    assert card.models == [] and "&lt;e&gt;" in render_card(card)


@pytest.mark.slow
def test_the_site_writes_a_card_page_per_version_with_calibration_files(board: Board, tmp_path: Path) -> None:
    build_site(board, tmp_path / "site")
    page = tmp_path / "site" / "card" / card_page_name("toy", "1.0.0")
    html = page.read_text()
    assert "Eval card: toy 1.0.0" in html and "<img" not in html
    files = sorted(page.parent.glob(page.stem + "-*.calibration.json"))
    assert len(files) == 2
    docs = [json.loads(f.read_text()) for f in files]
    assert all(d["learnable"] == ["tenth", "seventy"] for d in docs)
    assert (tmp_path / "site" / "card" / card_page_name("toy", "0.9.0")).is_file()
    assert card_page_name("a-b", "1") != card_page_name("a", "b-1")


@pytest.mark.slow
def test_the_site_exports_learnable_jsonl_when_the_environment_is_installed(tmp_path: Path) -> None:
    """--band-tasks: with the run's environment installed (same version and hash) the card offers
    learnable.jsonl exactly as `verihub calibrate` writes it; otherwise it says why not."""
    from hub.registry import load_environment, package_hash

    board = Board(tmp_path / "board")
    ids = [f"test-0-{i}" for i in range(4)]
    arith = write_run(
        tmp_path / "arith",
        env_id="arith",
        env_version=load_environment("arith").version,
        env_hash=package_hash("arith"),
        task_ids=ids,
        rewards=[(1.0, 0.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0)],
    )
    board.add(arith)
    board.add(write_run(tmp_path / "toy", model="m"))
    build_site(board, tmp_path / "plain")
    assert not list((tmp_path / "plain" / "card").glob("*.learnable.jsonl"))
    build_site(board, tmp_path / "site", band_tasks=True)
    card_dir = tmp_path / "site" / "card"
    (jsonl,) = card_dir.glob("*.learnable.jsonl")
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["test-0-0", "test-0-3"]  # 50%: in the band; 100%, 0%: out
    assert rows[0]["env_id"] == "arith" and rows[0]["prompt"] and rows[0]["pass_rate"] == 0.5
    arith_page = (card_dir / card_page_name("arith", load_environment("arith").version)).read_text()
    assert "learnable.jsonl" in arith_page
    toy_page = (card_dir / card_page_name("toy", "1.0.0")).read_text()
    assert "no learnable.jsonl" in toy_page


def test_the_card_shows_grader_failures_apart(board: Board) -> None:
    card = board_card(board, "toy", "1.0.0")
    assert all(m.grader_failures == 0 for m in card.models)
    assert "grader failures" not in render_card(card)
    failing = card.model_copy(
        update={"models": [m.model_copy(update={"grader_failures": 3}) for m in card.models]}
    )
    assert "3 grader failures" in render_card(failing)
