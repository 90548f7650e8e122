"""Run pages over HTTP: rollouts stored at push and by the backfill, the run page's paging, filters
and sort, a rollout's transcript (hostile content shown as text, long messages cut), its raw JSON,
a task across runs, and who may see which run. The older runs come from ``results_seed``."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_seed import Seeded, seed  # noqa: E402

from hub.client.runpack import pack_run  # noqa: E402
from hub.server.core.models import Run, RunRollout  # noqa: E402
from hub.server.results.rollout_query import parse_query  # noqa: E402
from hub.server.results.rollout_store import backfill  # noqa: E402
from hub.server.web.text import BIDI_CONTROLS, visible  # noqa: E402
from leaderboard.testing import fake_env_hash, write_run  # noqa: E402

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
BIDI = "access = \u202eevil\u202c; \u2067isolated\u2069 \u200b"
BIG = 1_000_000
#: 8 tasks x 4 rollouts; ``t0`` always passes, ``t7`` always errors (None), the rest mixed.
REWARDS = [
    [1.0, 1.0, 1.0, 1.0],
    [1.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 0.0],
    [0.5, 1.0, 0.0, 1.0],
    [1.0, 1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 1.0],
    [1.0, 0.0, 0.0, 0.0],
    [None, None, None, None],
]


def _hostile_run(path: Path, model: str, seed_: int = 0) -> Path:
    """A valid run of alice/toy 1.0.0 whose first rollout of t0 carries hostile content."""
    run = write_run(
        path,
        env_id="toy",
        env_version="1.0.0",
        model=model,
        rewards=REWARDS,
        env_hash=fake_env_hash("toy", "1.0.0"),
        completion=HOSTILE,
        seed=seed_,
    )
    lines = (run / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        data = json.loads(line)
        if data["task_id"] == "t0" and data["rollout_index"] == 0:
            data["messages"] = [
                {"role": "user", "content": BIDI},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "name": "lookup<b>", "arguments": '{"q": "</pre><script>1</script>"}'}
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "c1",
                    "name": "lookup<b>",
                    "content": "A" * BIG + "TAIL-MARK",
                },
                {"role": "assistant", "content": HOSTILE},
            ]
            data["grade"]["checks"] = [
                {"name": "format<i>", "score": 1.0, "passed": True, "reason": "has <u>an</u> answer"},
                {"name": "value", "score": 1.0, "passed": True, "reason": "equal"},
            ]
        out.append(json.dumps(data))
    (run / "rollouts.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    return run


@pytest.fixture
def seeded(hub: Any, tmp_path: Path) -> Seeded:
    return seed(hub, tmp_path / "runs")


def push(hub: Any, tmp_path: Path, who: str, model: str, *, public: bool, seed_: int = 0) -> str:
    run = _hostile_run(tmp_path / f"push-{model}", model, seed_)
    archive = pack_run(run, tmp_path / f"push-{model}.tar.gz")
    query = {"env": "alice/toy", **({"public": "1"} if public else {})}
    r = hub.client.post("/api/v1/results", content=archive.read_bytes(), params=query, headers=hub.auth(who))
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


@pytest.fixture
def pushed(hub: Any, seeded: Seeded, tmp_path: Path) -> str:
    return push(hub, tmp_path, "alice", "model-hostile", public=True)


def get(hub: Any, url: str, who: str | None = None) -> Any:
    return hub.client.get(url, headers=hub.auth(who) if who else {})


def _rows(hub: Any, public_id: str) -> list[RunRollout]:
    with hub.sessions()() as s:
        run = s.scalars(select(Run).where(Run.public_id == public_id)).one()
        return list(s.scalars(select(RunRollout).where(RunRollout.run_id == run.id).order_by(RunRollout.idx)))


def test_push_stores_every_rollout_with_its_transcript(hub: Any, pushed: str, tmp_path: Path) -> None:
    rows = _rows(hub, pushed)
    assert [r.idx for r in rows] == list(range(32))
    lines = (tmp_path / "push-model-hostile" / "rollouts.jsonl").read_bytes().splitlines()
    assert [zlib.decompress(r.transcript) for r in rows] == lines  # the lines as pushed, in order
    assert {(r.task_id, r.rollout_index) for r in rows} == {(f"t{t}", i) for t in range(8) for i in range(4)}
    by_key = {(r.task_id, r.rollout_index): r for r in rows}
    assert by_key[("t7", 2)].status == "errored" and by_key[("t7", 2)].reward is None
    assert by_key[("t7", 2)].error_kind == "model"
    assert by_key[("t1", 1)].status == "failed" and by_key[("t1", 1)].reward == 0.0
    assert by_key[("t3", 0)].status == "failed" and by_key[("t3", 0)].reward == 0.5
    assert by_key[("t0", 0)].status == "passed" and by_key[("t0", 0)].extracted == "42"
    assert by_key[("t0", 0)].n_messages == 4
    with hub.sessions()() as s:
        run = s.scalars(select(Run).where(Run.public_id == pushed)).one()
        assert run.rollouts_stored and json.loads(run.config)["rollouts_per_task"] == 4
    assert _count(hub) == 32  # the seeded runs, inserted without the push, have none yet


def _count(hub: Any) -> int:
    with hub.sessions()() as s:
        return int(s.scalar(select(func.count()).select_from(RunRollout)) or 0)


def test_backfill_stores_the_rollouts_of_runs_pushed_before(hub: Any, seeded: Seeded) -> None:
    strong = seeded.ids["strong"]
    page = get(hub, f"/runs/{strong}").text
    assert "verihub hub backfill-rollouts" in page and "/rollouts/0" not in page
    done = backfill(hub.sessions(), hub.client.app.state.storage)
    assert {d.public_id: d.rollouts for d in done} == {pid: 32 for pid in seeded.ids.values()}
    assert backfill(hub.sessions(), hub.client.app.state.storage) == []  # nothing left to do
    assert len(_rows(hub, strong)) == 32
    page = get(hub, f"/runs/{strong}").text
    assert "backfill-rollouts" not in page and f"/runs/{strong}/rollouts/0" in page
    assert "1–32 of 32 rollouts" in page


def test_the_run_page_shows_settings_and_summary(hub: Any, pushed: str) -> None:
    html = get(hub, f"/runs/{pushed}").text
    assert "model-hostile" in html and "0.482" in html  # mean of REWARDS' graded rollouts: 13.5/28
    assert "per rollout, from run seed 0" in html  # the sampling seed the run did set
    assert "sampling: temperature" in html and "0.7" in html
    assert "environment arguments" in html and "max_turns" in html


def test_the_card_links_each_run_and_shows_its_seed(hub: Any, pushed: str) -> None:
    html = get(hub, "/alice/toy/v/1.0.0").text
    assert f'href="/runs/{pushed}"' in html
    assert "per rollout, from run seed 0" in html


def _listed(html: str, href: str) -> list[int]:
    """The rollout indexes a run page lists, in order."""
    marker = f'href="{href}/rollouts/'
    return [int(part.split('"', 1)[0]) for part in html.split(marker)[1:]]


def test_rollouts_page_filter_and_sort(hub: Any, pushed: str) -> None:
    href = f"/runs/{pushed}"
    html = get(hub, f"{href}?per_page=10&page=2").text
    assert _listed(html, href) == list(range(10, 20)) and "11–20 of 32 rollouts" in html
    assert "page 2 of 4" in html
    last = get(hub, f"{href}?per_page=10&page=99").text  # past the end: the last page
    assert _listed(last, href) == [30, 31] and "page 4 of 4" in last
    rows = {r.idx: r for r in _rows(hub, pushed)}
    errored = get(hub, f"{href}?status=errored").text
    assert sorted(_listed(errored, href)) == sorted(i for i, r in rows.items() if r.status == "errored")
    assert "4 of 4 rollouts matching" in errored.replace("1–4 of", "4 of")
    task = get(hub, f"{href}?task=t3&sort=-reward").text
    listed = _listed(task, href)
    assert [rows[i].task_id for i in listed] == ["t3"] * 4
    assert [rows[i].reward for i in listed] == [1.0, 1.0, 0.5, 0.0]
    band = get(hub, f"{href}?reward_min=0.25&reward_max=0.75").text
    assert _listed(band, href) == [i for i, r in rows.items() if r.reward == 0.5]
    by_task = _listed(get(hub, f"{href}?sort=task&per_page=100").text, href)
    assert [(rows[i].task_id, rows[i].rollout_index) for i in by_task] == sorted(
        (r.task_id, r.rollout_index) for r in rows.values()
    )
    bad = get(hub, f"{href}?status=%3Cscript%3E&reward_min=abc&per_page=5000").text
    assert "is not one of" in bad and "is not a number" in bad and "&lt;script&gt;" in bad
    assert "<script>" not in bad and len(_listed(bad, href)) == 32  # per_page capped, filters dropped


def test_parse_query_bounds_and_defaults() -> None:
    q = parse_query({"per_page": "0", "page": "-3", "sort": "nope", "reward_max": "inf"})
    assert (q.per_page, q.page, q.sort, q.reward_max) == (1, 1, "idx", None)
    assert len(q.errors) == 2
    q = parse_query({"per_page": "1000", "status": "passed", "reward_min": "0.5"})
    assert (q.per_page, q.status, q.reward_min) == (100, "passed", 0.5)
    assert q.params(page=3) == "?status=passed&reward_min=0.5&per_page=100&page=3"


def test_hostile_transcript_renders_as_text(hub: Any, pushed: str) -> None:
    idx = next(r.idx for r in _rows(hub, pushed) if (r.task_id, r.rollout_index) == ("t0", 0))
    r = get(hub, f"/runs/{pushed}/rollouts/{idx}")
    assert r.status_code == 200
    assert "script-src" not in r.headers["content-security-policy"]
    html = r.text
    assert "<script>" not in html and "<img" not in html and "<b>" not in html and "<u>an" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "lookup&lt;b&gt;" in html and "format&lt;i&gt;" in html  # tool and check names
    assert "&lt;/pre&gt;&lt;script&gt;1&lt;/script&gt;" in html  # tool-call arguments
    for ch in BIDI_CONTROLS | {"\u200b"}:
        assert ch not in html
    assert "U+202E" in html and "U+2067" in html and "U+200B" in html
    # the 1 MB tool message is cut, said so, and linked to the raw JSON
    assert len(html) < 200_000 and "TAIL-MARK" not in html
    assert f"cut: {BIG + len('TAIL-MARK') - 20_000:,} more characters" in html
    assert f'href="/runs/{pushed}/rollouts/{idx}.json"' in html
    assert "extracted answer" in html and "has &lt;u&gt;an&lt;/u&gt; answer" in html


def test_raw_json_is_the_whole_rollout_as_json(hub: Any, pushed: str) -> None:
    idx = next(r.idx for r in _rows(hub, pushed) if (r.task_id, r.rollout_index) == ("t0", 0))
    r = get(hub, f"/runs/{pushed}/rollouts/{idx}.json")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers["x-content-type-options"] == "nosniff"
    data = r.json()
    assert data["messages"][2]["content"].endswith("TAIL-MARK") and len(data["messages"][2]["content"]) > BIG
    assert get(hub, f"/runs/{pushed}/rollouts/999.json").status_code == 404
    last = get(hub, f"/runs/{pushed}/rollouts/31").text
    assert 'rel="prev"' in last and 'rel="next"' not in last
    assert get(hub, f"/runs/{pushed}/rollouts/999").status_code == 404


def test_private_runs_are_404_to_all_but_owner_and_admins(hub: Any, seeded: Seeded, tmp_path: Path) -> None:
    private = push(hub, tmp_path, "bob", "model-private", public=False, seed_=5)
    urls = [f"/runs/{private}", f"/runs/{private}/rollouts/0", f"/runs/{private}/rollouts/0.json"]
    for url in urls:
        assert get(hub, url).status_code == 404, url
        assert get(hub, url, "alice").status_code == 404, url
        assert get(hub, url, "bob").status_code == 200, url
        assert get(hub, url, "bob_read").status_code == 200, url
        assert get(hub, url, "root").status_code == 200, url
    assert "model-private" not in get(hub, "/runs/nosuchrun", "alice").text
    backfill(hub.sessions(), hub.client.app.state.storage)
    secret = seeded.ids["secret"]  # a public run of bob's private environment
    assert get(hub, f"/runs/{secret}", "alice").status_code == 404
    assert get(hub, f"/runs/{secret}/rollouts/0.json", "alice").status_code == 404
    assert get(hub, f"/runs/{secret}", "bob").status_code == 200
    task = get(hub, "/alice/toy/tasks/t0").text
    assert "model-private" not in task and "model-hidden" not in task
    assert "model-private" in get(hub, "/alice/toy/tasks/t0", "bob").text
    assert get(hub, "/bob/secret/tasks/t0", "alice").status_code == 404


def test_task_page_puts_every_visible_run_side_by_side(hub: Any, pushed: str, seeded: Seeded) -> None:
    backfill(hub.sessions(), hub.client.app.state.storage)
    html = get(hub, "/alice/toy/tasks/t2").text
    for model in ("model-hostile", "model-a", "model-b", "c, tuned"):
        assert model in html
    for pid in (pushed, seeded.ids["strong"], seeded.ids["newer"]):
        assert f'href="/runs/{pid}"' in html
    assert "0 of 4" in html  # the pushed run never passes t2
    only = get(hub, "/alice/toy/tasks/t2?version=1.1.0").text
    assert seeded.ids["newer"] in only and seeded.ids["strong"] not in only
    assert "No run you may see" in get(hub, "/alice/toy/tasks/nosuch").text


def test_visible_shows_controls_and_escapes() -> None:
    out = str(visible("a\u202eb<c>\x00\n\td"))
    assert out == 'a<span class="ctl">U+202E</span>b&lt;c&gt;<span class="ctl">U+0000</span>\n\td'
    assert str(visible(None)) == ""


def test_backfill_command_fills_old_runs_once(
    hub: Any, seeded: Seeded, capsys: pytest.CaptureFixture[str]
) -> None:
    from hub.cli.entry import main

    def run() -> str:
        with pytest.raises(SystemExit) as done:
            main(["hub", "backfill-rollouts", "--data", str(hub.config.data)])
        assert done.value.code in (0, None)
        return capsys.readouterr().out

    out = run()
    assert f"{seeded.ids['strong']}: 32 rollouts stored" in out and "7 run(s) backfilled, 0 failed" in out
    assert _count(hub) == 7 * 32
    assert "0 run(s) backfilled" in run()


def test_migration_keeps_runs_pushed_before_and_goes_back(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import inspect, text

    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    rows = [
        "INSERT INTO owners (id, name, kind, is_admin, is_reviewer, created_at)"
        " VALUES (1, 'old', 'user', 0, 0, '2026-01-01')",
        "INSERT INTO environments (id, owner_id, env_id, distribution, project, private, flagged, summary,"
        " tags, license, created_at) VALUES (1, 1, 'toy', 'toy', 'toy', 0, '', '', '', '', '2026-01-01')",
        "INSERT INTO versions (id, environment_id, version, manifest_sha256, content_hash, requires_python,"
        " readme, state, report, yanked, yank_reason, uploaded_at)"
        " VALUES (1, 1, '1.0', 'm', 'c', '', '', 'passed', '', 0, '', '2026-01-01')",
        "INSERT INTO runs (id, public_id, version_id, owner_id, model, label, private, archive_sha256,"
        " run_sha256, entry, summary, created_at, verify_state, verify_report, verify_attempts,"
        " verify_worker)"
        " VALUES (1, 'oldrun', 1, 1, 'm', '', 0, 'a', 'r', '{}', '{}', '2026-01-01', 'pending', '', 0, '')",
    ]
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        for sql in rows:
            conn.execute(text(sql))
    migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT config, rollouts_stored FROM runs")).one() in (("", 0), ("", False))
        names = {ix["name"] for ix in inspect(conn).get_indexes("rollouts")}
        assert {"ix_rollouts_run_order", "ix_rollouts_run_task", "ix_rollouts_run_status"} <= names
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
        assert "rollouts" not in inspect(conn).get_table_names()
        assert "config" not in {c["name"] for c in inspect(conn).get_columns("runs")}
    engine.dispose()


def test_a_rollout_too_large_to_parse_offers_its_raw_json(hub: Any, pushed: str, monkeypatch: Any) -> None:
    from hub.server.results import transcript

    monkeypatch.setattr(transcript, "MAX_PARSE_BYTES", 1000)
    idx = next(r.idx for r in _rows(hub, pushed) if (r.task_id, r.rollout_index) == ("t0", 0))
    html = get(hub, f"/runs/{pushed}/rollouts/{idx}").text
    assert "too large to show here" in html and "AAAA" not in html
    assert f'href="/runs/{pushed}/rollouts/{idx}.json"' in html
