"""The hub's result pages over HTTP: the eval card of a version, its band
export, the leaderboards of an environment and across environments, their filters, and who sees
which run. Runs are inserted straight into the database (``results_seed``; see its table)."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_seed import Seeded, seed  # noqa: E402

from hub.review import Calibration  # noqa: E402
from leaderboard import FRAGMENT_CSS  # noqa: E402

CARD = "/alice/toy/v/1.0.0"
BOARD = "/alice/toy/leaderboard"


class _Tables(HTMLParser):
    """Every table row's cell texts, and the text of each ``<section>`` (leaderboard columns)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.sections: list[str] = []
        self._cell: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "section":
            self.sections.append("")
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "section":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._depth and self.sections:
            self.sections[-1] += data


def parse(html: str) -> _Tables:
    p = _Tables()
    p.feed(html)
    return p


def row_of(html: str, first: str, *, header: str | None = None) -> list[str]:
    """The table row whose first cell starts with ``first`` (in the table with ``header``)."""
    rows = parse(html).rows
    for i, r in enumerate(rows):
        if r and r[0].startswith(first):
            if header is None or any(header in h for h in _header_above(rows, i)):
                return r
    raise AssertionError(f"no row {first!r}")


def _header_above(rows: list[list[str]], i: int) -> list[str]:
    for r in reversed(rows[:i]):
        if r and r[0] in ("model", "#", "run"):
            return r
    return []


@pytest.fixture
def seeded(hub: Any, tmp_path: Path) -> Seeded:
    return seed(hub, tmp_path / "runs")


def get(hub: Any, url: str, who: str | None = None) -> Any:
    return hub.client.get(url, headers=hub.auth(who) if who else {})


def test_card_has_each_models_numbers_plots_and_full_settings(hub: Any, seeded: Seeded) -> None:
    r = get(hub, CARD)
    assert r.status_code == 200
    assert "script-src" not in r.headers["content-security-policy"]  # default-src 'none': no script
    html = r.text
    strong = row_of(html, "model-a (split=test, 8 tasks x 4, temperature=0.7", header="mean reward")
    assert strong[1:5] == ["0.875", "[0.750, 0.969]", "1.000 (k=4)", "0.625 (k=4)"]
    assert strong[5] == "0 of 32" and strong[6] == "480" and strong[7] == "–"  # no price: no cost
    assert row_of(html, "c, tuned", header="mean reward")[1] == "0.844"  # the label, not model-c
    assert row_of(html, "model-b", header="mean reward")[1] == "0.125"
    # sampling in full: the run that left temperature unset reads "server default"
    settings = next(r for r in parse(html).rows if r[:2] == ["model", "temperature"])
    unset = row_of(html, "model-a (split=test, 8 tasks x 4, temperature=server default", header="temperature")
    assert unset[settings.index("temperature")] == "server default"
    assert row_of(html, "model-b", header="temperature")[settings.index("temperature")] == "0.7"
    assert "None" not in unset
    # difficulty: model-b passes t2, t4 (25%) and t7 (50%) only: 5 at 0%, 0 at 100%, 3 learnable
    assert row_of(html, "model-b", header="graded tasks")[1:6] == ["8", "5", "0", "3", "0"]
    assert "at least one pass, 1.6% ≤ pass rate ≤ 70%" in html
    # three plots, inline, with no style for the page policy (style-src 'self') to refuse
    assert html.count("<svg") == 3
    assert "style=" not in html and "<style" not in html
    assert "model-hidden" not in html and "model-secret" not in html


@pytest.mark.slow
def test_card_lists_runs_with_pusher_label_and_verification(hub: Any, seeded: Seeded) -> None:
    html = get(hub, CARD).text
    ids = seeded.ids
    strong = row_of(html, ids["strong"])
    assert (
        strong[1:4] == ["model-a", "–", "alice"]
        and strong[4].endswith("UTC")
        and strong[5] == "re-graded: consistent"
    )
    weak = row_of(html, ids["weak"])
    assert weak[3] == "bob" and weak[5] == (
        "re-graded: inconsistent 2 of 8 re-graded rollouts differ, e.g. t2#0: "
        "recorded passed=True reward=1.0, regraded passed=False reward=0"
    )
    assert row_of(html, ids["tied"])[2] == "c, tuned"
    assert ">verified<" not in html and "the hub did not" in html  # says what the re-grade checks
    assert "<strong>pushed</strong>" in get(hub, BOARD).text
    assert row_of(html, ids["nodefault"])[5] == "re-grade pending"
    assert ids["hidden"] not in html
    # the pusher sees their private run, with its error
    mine = get(hub, CARD, "bob_read").text
    hidden = row_of(mine, ids["hidden"])
    assert hidden[0].endswith("private") and hidden[5] == "re-grade failed sandbox timed out"
    assert ids["hidden"] not in get(hub, CARD, "alice_read").text


def test_band_export_is_calibrates_format(hub: Any, seeded: Seeded) -> None:
    r = get(hub, f"{CARD}/band/{seeded.ids['weak']}.jsonl")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert "attachment" in r.headers["content-disposition"]
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert sorted(row["task_id"] for row in rows) == ["t2", "t4", "t7"]  # 25%, 25%, 50%: in the band
    for row in rows:
        assert list(row) == [
            "env_id",
            "task_id",
            "prompt",
            "answer",
            "metadata",
            "pass_rate",
            "ci_low",
            "ci_high",
            "n",
        ]
        assert row["env_id"] == "toy" and row["n"] == 4
        assert row["prompt"] == [{"role": "user", "content": f"Solve task {row['task_id']}."}]
        assert row["pass_rate"] == {"t2": 0.25, "t4": 0.25, "t7": 0.5}[row["task_id"]]
        assert row["ci_low"] <= row["pass_rate"] <= row["ci_high"]
    cal = get(hub, f"{CARD}/band/{seeded.ids['weak']}.calibration.json")
    assert cal.status_code == 200
    doc = Calibration.model_validate_json(cal.text)
    assert sorted(doc.learnable) == ["t2", "t4", "t7"] and len(doc.zero) == 5 and doc.model == "model-b"
    # the card links both downloads
    assert f'href="{CARD}/band/{seeded.ids["weak"]}.jsonl"' in get(hub, CARD).text


def test_band_export_is_refused_where_the_run_is_not_shown(hub: Any, seeded: Seeded) -> None:
    ids = seeded.ids
    hidden = f"{CARD}/band/{ids['hidden']}.jsonl"
    assert get(hub, hidden).status_code == 404
    assert get(hub, hidden, "alice_read").status_code == 404
    assert get(hub, hidden, "bob_read").status_code == 200
    assert get(hub, f"/alice/toy/v/1.1.0/band/{ids['strong']}.jsonl").status_code == 404  # other version
    assert get(hub, f"{CARD}/band/{ids['strong']}.txt").status_code == 404
    assert get(hub, f"/bob/secret/v/1.0.0/band/{ids['secret']}.calibration.json").status_code == 404


def test_leaderboard_keeps_versions_and_settings_apart_and_shows_ties(hub: Any, seeded: Seeded) -> None:
    html = get(hub, BOARD).text
    sections = parse(html).sections
    assert len(sections) == 3  # 1.1.0; 1.0.0 at temperature 0.7; 1.0.0 with temperature unset
    assert sections[0].startswith("version 1.1.0")
    main = next(s for s in sections if "temperature=0.7" in s and "1.0.0" in s)
    assert (
        "model-b" in main
        and "c, tuned" in main
        and "temperature=server default" not in main.split("Settings")[0]
    )
    assert row_of(html, "=1")[1] == "model-a" and [r[:2] for r in parse(html).rows if r[:1] == ["=1"]] == [
        ["=1", "model-a"],
        ["=1", "c, tuned"],
    ]
    assert ["3", "model-b"] in [r[:2] for r in parse(html).rows]  # clearly below both: not tied
    assert "=n: tied, the 95% intervals of these runs overlap." in html
    assert "not a ranking" not in html
    assert html.count("<svg") == 9 and "style=" not in html


def test_compare_puts_settings_in_one_table_marked_as_no_ranking(hub: Any, seeded: Seeded) -> None:
    html = get(hub, BOARD + "?compare=1").text
    tables = parse(html)
    header = next(r for r in tables.rows if r[:1] == ["#"])
    assert header[:4] == ["#", "model", "version", "settings"]
    assert len([r for r in tables.rows if r and r[0] != "#" and len(r) == len(header)]) == 5
    assert "Runs of different settings, compared on request: not a ranking." in html
    assert tables.sections == []  # one table, no per-settings columns


def test_filters_by_model_owner_and_date(hub: Any, seeded: Seeded) -> None:
    def models(query: str) -> list[str]:
        rows = parse(get(hub, BOARD + "?compare=1&" + query).text).rows
        return sorted(r[1].split(" (")[0] for r in rows if r and r[0] != "#" and len(r) > 8)

    assert models("") == ["c, tuned", "model-a", "model-a", "model-a", "model-b"]
    assert models("model=model-b") == ["model-b"]
    assert models("model=model-b&model=model-c") == ["c, tuned", "model-b"]
    assert models("owner=bob") == ["model-b"]
    assert models("since=2026-09-25") == ["model-a"]  # the 1.1.0 run, ten days later
    assert models("until=2026-09-21") == ["c, tuned", "model-a", "model-a", "model-b"]
    assert models("owner=alice&until=2026-09-20") == []
    page = get(hub, BOARD + "?since=21-09-2026").text
    assert "is not a date (YYYY-MM-DD); ignored" in page and "model-b" in page
    form = page[page.index('<form class="filters"') :]
    assert 'method="get"' in form[: form.index(">")] and "<script" not in page


def test_cross_leaderboard_places_models_per_environment(hub: Any, seeded: Seeded) -> None:
    r = get(hub, "/leaderboard")
    assert r.status_code == 200 and "Leaderboard across environments" in r.text
    assert 'href="/alice/toy/leaderboard"' in r.text
    assert row_of(r.text, "model-a")[1].startswith("0.844 (rank 1)")  # the current build, 1.1.0
    assert "secret" not in r.text and "model-hidden" not in r.text
    filtered = get(hub, "/leaderboard?model=model-b").text
    assert (
        row_of(filtered, "model-b")[1].startswith("0.125 (rank 1)")
        and "model-a" not in filtered.split('class="board"')[1]
    )
    mine = get(hub, "/leaderboard", "bob_read").text
    assert 'href="/bob/secret/leaderboard"' in mine and "model-secret" in mine


@pytest.mark.slow
def test_private_runs_and_environments_stay_hidden(hub: Any, seeded: Seeded) -> None:
    for url in ("/bob/secret/leaderboard", "/bob/secret/v/1.0.0"):
        assert get(hub, url).status_code == 404
        assert get(hub, url, "alice_read").status_code == 404
        assert get(hub, url, "bob_read").status_code == 200
    assert "model-secret" in get(hub, "/bob/secret/v/1.0.0", "bob_read").text
    for who in (None, "alice_read"):
        assert "model-hidden" not in get(hub, BOARD, who).text
        assert "model-hidden" not in get(hub, BOARD + "?compare=1", who).text
    assert "model-hidden" in get(hub, BOARD, "bob_read").text


def test_pages_are_linked_and_routed(hub: Any, seeded: Seeded) -> None:
    env = get(hub, "/alice/toy").text
    assert 'href="/alice/toy/leaderboard"' in env
    assert 'href="/alice/toy/v/1.0.0">Eval card' in env and 'href="/alice/toy/v/1.1.0">Eval card' in env
    assert 'href="/leaderboard"' in get(hub, "/").text
    assert get(hub, "/alice/toy/v/9.9.9").status_code == 404
    assert get(hub, "/nobody/toy/leaderboard").status_code == 404
    css = get(hub, "/static/results.css")
    assert css.headers["content-type"].startswith("text/css") and FRAGMENT_CSS.strip() in css.text
    # the card's rows link to the run on the card
    board = get(hub, BOARD).text
    assert f'href="{CARD}#run-{seeded.ids["weak"]}"' in board
    assert f'id="run-{seeded.ids["weak"]}"' in get(hub, CARD).text


def test_verification_reasons_are_read_from_any_report_shape(tmp_path: Path) -> None:
    from hub.server.results.band_tasks import tasks_from_archive
    from hub.server.results.data import verify_status

    assert verify_status("verified", '{"reason": "ignored"}') == ("verified", "")
    told = '{"graded": 20, "total": 75, "n_differ": 0, "differ": []}'
    assert (
        verify_status("verified", told)[1]
        == "re-graded 20 of 75 graded rollouts in the sandbox: every verdict agrees"
    )
    assert verify_status("unverified", '{"message": "t3 regraded 0, pushed 1"}') == (
        "unverified",
        "t3 regraded 0, pushed 1",
    )
    assert (
        verify_status("unverified", '{"reason": ["t1 differs", "t2 differs"]}')[1] == "t1 differs; t2 differs"
    )
    assert verify_status("error", "worker crashed\n") == ("error", "worker crashed")
    assert verify_status("error", '{"n": 3}') == ("error", '{"n": 3}')
    assert verify_status("error", "x" * 1000)[1] == "x" * 400
    # a stored run without rollouts gives the reason, not a crash
    (tmp_path / "junk").write_bytes(b"not a tar")
    assert "cannot be read" in str(tasks_from_archive(tmp_path / "junk"))


@pytest.mark.slow
def test_hostile_labels_and_reasons_are_escaped(hub: Any, seeded: Seeded) -> None:
    from hub.server.core.models import Run

    evil = '<img src=x onerror="alert(1)">'
    with hub.sessions()() as session:
        run = session.query(Run).filter_by(public_id=seeded.ids["weak"]).one()
        run.label = evil
        run.verify_report = json.dumps({"reason": evil})
        session.commit()
    for url in (CARD, BOARD, BOARD + "?compare=1"):
        html = get(hub, url).text
        assert "<img" not in html and "&lt;img src=x onerror=" in html


def _store_tasks(hub: Any, public_id: str, blob: bytes | None, *, sha: str | None = None) -> None:
    """Record a re-verification that stored ``blob`` as the run's environment tasks."""
    from hub.server.core.models import Run

    if blob is not None:
        sha = hub.client.app.state.storage.put_bytes(blob)
    with hub.sessions()() as session:
        run = session.query(Run).filter_by(public_id=public_id).one()
        report = json.loads(run.verify_report or "{}")
        run.verify_report = json.dumps({**report, "tasks_sha256": sha})
        session.commit()


def test_band_export_uses_the_environments_tasks_stored_by_reverification(hub: Any, seeded: Seeded) -> None:
    from hub.env import Task

    weak = seeded.ids["weak"]
    url = f"{CARD}/band/{weak}.jsonl"
    assert get(hub, url).headers["x-verihub-band-tasks"] == "rollouts"
    real = {
        tid: Task(id=tid, prompt=f"What is {tid}?", answer=f"answer-{tid}", metadata={"level": n})
        for n, tid in enumerate(["t2", "t4", "t7", "t0"])
    }
    lines = [t.model_dump_json().encode() for t in real.values()]
    lines += [
        b"not json",
        b'{"id": "t9", "prompt": "a task of no run", "answer": "x"}',  # not a task of this run
        b'{"prompt": "no id"}',
        Task(id="t4", prompt="a repeat", answer="forged").model_dump_json().encode(),
        b"",
    ]
    _store_tasks(hub, weak, b"\n".join(lines))
    r = get(hub, url)
    assert r.status_code == 200 and r.headers["x-verihub-band-tasks"] == "environment"
    rows = {row["task_id"]: row for row in map(json.loads, r.text.splitlines())}
    assert sorted(rows) == ["t2", "t4", "t7"]  # the learnable band, now with the real tasks
    for tid, row in rows.items():
        assert row["prompt"] == [{"role": "user", "content": f"What is {tid}?"}]
        # calibrate writes answer and metadata as JSON strings (one column type for every row)
        assert json.loads(row["answer"]) == f"answer-{tid}"
        assert json.loads(row["metadata"]) == real[tid].metadata
        assert row["pass_rate"] == {"t2": 0.25, "t4": 0.25, "t7": 0.5}[tid]
    card = get(hub, CARD).text
    assert row_of(card, weak)[6] == "tasks from the environment (re-verification)"
    assert row_of(card, seeded.ids["strong"])[6] == (
        "prompts from the pushed rollouts; answers unknown until the run is re-verified"
    )
    # only t2 of the run listed: the export holds the environment's t2 and nothing made up
    _store_tasks(hub, weak, real["t2"].model_dump_json().encode() + b"\n")
    rows = {row["task_id"]: row for row in map(json.loads, get(hub, url).text.splitlines())}
    assert list(rows) == ["t2"] and json.loads(rows["t2"]["answer"]) == "answer-t2"


@pytest.mark.parametrize(
    "blob",
    [b"not json\n{}\n", b'{"id": "t9", "prompt": "other run", "answer": "x"}\n', None],
    ids=["malformed", "other-ids", "blob-missing"],
)
def test_band_export_falls_back_to_the_rollouts_prompts(hub: Any, seeded: Seeded, blob: bytes | None) -> None:
    weak = seeded.ids["weak"]
    _store_tasks(hub, weak, blob, sha="ab" * 32)
    r = get(hub, f"{CARD}/band/{weak}.jsonl")
    assert r.status_code == 200 and r.headers["x-verihub-band-tasks"] == "rollouts"
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert sorted(row["task_id"] for row in rows) == ["t2", "t4", "t7"]
    for row in rows:
        assert row["prompt"] == [{"role": "user", "content": f"Solve task {row['task_id']}."}]
        assert json.loads(row["answer"]) is None and json.loads(row["metadata"]) == {}


def test_stored_tasks_are_read_as_untrusted(tmp_path: Path) -> None:
    from hub.env import Task
    from hub.server.results.band_tasks import dump_tasks, load_tasks, stored_tasks_sha

    tasks = [Task(id=f"t{i}", prompt="p", answer=i) for i in range(3)]
    data = dump_tasks([*tasks, Task(id="x", prompt="p")], {"t0", "t1", "t2"})
    assert data is not None and load_tasks(data, {"t0", "t2"}) == [tasks[0], tasks[2]]
    assert dump_tasks(tasks, {"t0", "t1", "t2"}, cap=len(data) - 1) is None
    assert load_tasks(b'[1]\n{"id": 3}\n\xff\n' + data, {"t1"}) == [tasks[1]]
    assert stored_tasks_sha(json.dumps({"tasks_sha256": "ab" * 32})) == "ab" * 32
    for report in ("", "not json", "[]", '{"tasks_sha256": "../../etc/passwd"}', '{"tasks_sha256": 1}'):
        assert stored_tasks_sha(report) is None


def test_pages_come_from_the_cache_until_something_changes(
    hub: Any, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawing a card costs its plots: a second request is served from the page cache, per
    viewer; a change through the API (a run made private) drops the cache."""
    import hub.server.results.pages as pages

    drawn: list[str] = []
    real = pages.eval_card

    def counting(*args: Any, **kwargs: Any) -> Any:
        drawn.append("card")
        return real(*args, **kwargs)

    monkeypatch.setattr(pages, "eval_card", counting)
    first = get(hub, CARD).text
    assert get(hub, CARD).text == first and len(drawn) == 1  # the second came from the cache
    assert seeded.ids["strong"] in get(hub, CARD, "alice").text and len(drawn) == 2  # another viewer
    made_private = hub.client.post(
        f"/api/v1/results/{seeded.ids['strong']}", params={"public": "0"}, headers=hub.auth("alice")
    )
    assert made_private.status_code == 200, made_private.text
    assert seeded.ids["strong"] not in get(hub, CARD).text and len(drawn) == 3
    assert seeded.ids["strong"] in get(hub, CARD, "alice").text  # still shown to its pusher
