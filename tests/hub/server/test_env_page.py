"""An environment's page (README first, results summary, author, last update, install count,
versions with review and verifier card slot), install counting at ``/files/``, and the tables'
GET sorting and filtering, over HTTP with runs inserted straight into the database."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from envpage_seed import WHEEL, seed_env_page  # noqa: E402

from hub.server.core.models import Version  # noqa: E402


def _main(html: str) -> str:
    return html[html.index("<main>") : html.index("</main>")]


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _refs(html: str) -> list[str]:
    """The environments of a list, in the order shown."""
    return re.findall(r'<a class="env" href="/([^"]+)"', html)


@pytest.fixture
def site(hub: Any, tmp_path: Path) -> dict[str, Any]:
    return seed_env_page(hub, tmp_path)


def get(hub: Any, url: str, who: str | None = None, **headers: str) -> Any:
    return hub.client.get(url, headers={**(hub.auth(who) if who else {}), **headers})


def test_the_readme_comes_first_then_results_facts_and_versions(hub: Any, site: dict[str, Any]) -> None:
    r = get(hub, "/alice/toy")
    assert r.status_code == 200
    main = _main(r.text)
    marks = ("Toy readme", 'id="results"', "<h2>Install</h2>", '<table class="versions"')
    order = [main.index(s) for s in marks]
    assert order == sorted(order)
    assert '<dd id="author"><a href="/alice">alice</a></dd>' in main
    assert re.search(r'<dd id="updated"><time datetime="\d{4}-\d\d-\d\dT', main)
    # every version has its review state, and its report row its verifier card (none measured here)
    for v in ("1.0.0", "1.1.0", "1.2.0"):
        row, report = main[main.index(f'<tr id="v-{v}">') :].split("</tr>")[:2]
        assert "badge" in row and "error rate not measured" in report


def test_results_summary_is_the_best_run_per_model_of_the_newest_version(
    hub: Any, site: dict[str, Any]
) -> None:
    ids = site["ids"]
    summary = _main(get(hub, "/alice/toy").text).split('id="results"')[1].split("</section>")[0]
    # anonymous: 1.2.0's only run is private, so the newest version with runs is 1.1.0
    assert "version <strong>1.1.0</strong> (3 runs)" in summary
    assert f'href="/alice/toy/v/1.1.0#run-{ids["newer"]}"' in summary  # model-a's best (0.844)
    assert ids["a-weak"] not in summary  # model-a's weaker run is not its best
    assert f'href="/alice/toy/v/1.1.0#run-{ids["b-new"]}"' in summary
    assert summary.index(ids["newer"]) < summary.index(ids["b-new"])  # best score first
    assert "0.844" in summary and "model-z" not in summary and "private" not in summary
    assert 'href="/alice/toy/v/1.1.0"' in summary  # the eval card


def test_a_private_run_is_in_the_summary_only_for_who_may_see_it(hub: Any, site: dict[str, Any]) -> None:
    ids = site["ids"]
    for who in ("bob", "root"):
        summary = _main(get(hub, "/alice/toy", who).text).split('id="results"')[1].split("</section>")[0]
        assert "version <strong>1.2.0</strong> (1 run)" in summary
        assert ids["z-private"] in summary and "model-z" in summary and "private" in summary
    assert "model-z" not in get(hub, "/alice/toy", "alice").text


def test_installs_count_wheel_downloads_not_index_pages_head_or_resumes(
    hub: Any, site: dict[str, Any]
) -> None:
    url = f"/files/{site['sha']}/{WHEEL}"

    def count() -> tuple[str, str]:
        main = _main(get(hub, "/alice/toy").text)
        total = re.search(r'<dd id="installs">(\d+)</dd>', main)
        row = main[main.index('<tr id="v-1.1.0">') :].split("</tr>")[0]
        cell = re.search(r'data-label="installs" class="num">(\d+)<', row)
        assert total is not None and cell is not None
        return total.group(1), cell.group(1)

    assert count() == ("0", "0")
    assert get(hub, "/simple/alice-toy/").status_code == 200
    assert get(hub, "/simple/").status_code == 200
    assert hub.client.head(url).status_code == 200
    assert get(hub, url + ".metadata").status_code == 404
    assert count() == ("0", "0")
    r = get(hub, url)
    assert r.status_code == 200 and r.content.startswith(b"PK fake")
    assert count() == ("1", "1")
    assert get(hub, url, Range="bytes=100-").status_code == 206  # a resume: counted at its start
    assert get(hub, url, Range="bytes=0-99").status_code == 206  # a partial read
    assert count() == ("1", "1")
    get(hub, url, "bob")
    get(hub, url, Range="bytes=0-")
    assert count() == ("3", "3")
    info = get(hub, "/api/v1/envs/alice/toy").json()
    assert info["installs"] == 3 and [v["installs"] for v in info["versions"]] == [0, 3, 0]
    # the home list shows the environment's total
    home = _main(get(hub, "/").text)
    assert re.search(r'href="/alice/toy".*?data-label="installs" class="num">3<', home, re.S)


def test_lists_sort_and_filter_by_get_parameters(hub: Any, site: dict[str, Any]) -> None:
    get(hub, f"/files/{site['sha']}/{WHEEL}")
    assert _refs(get(hub, "/").text) == ["alice/toy", "bob/other"]
    assert _refs(get(hub, "/?sort=-name").text) == ["bob/other", "alice/toy"]
    assert _refs(get(hub, "/?sort=-installs").text) == ["alice/toy", "bob/other"]
    assert _refs(get(hub, "/?sort=installs").text) == ["bob/other", "alice/toy"]
    assert _refs(get(hub, "/?state=failed").text) == ["bob/other"]
    assert _refs(get(hub, "/?state=queued&sort=-name").text) == ["alice/toy"]  # its newest, 1.2.0
    assert _refs(get(hub, "/?q=toy&sort=-name").text) == ["alice/toy"]
    assert _refs(get(hub, "/bob?sort=-name", "bob").text) == ["bob/secret", "bob/other"]
    # the header links keep the other parameters and flip the current order
    html = get(hub, "/?q=o&sort=-installs").text
    assert 'href="/?q=o&amp;sort=installs"' in html and 'href="/?q=o&amp;sort=name"' in html


def test_versions_table_sorts_and_filters(hub: Any, site: dict[str, Any]) -> None:
    def versions(query: str) -> list[str]:
        return re.findall(r'<tr id="v-([^"]+)">', get(hub, "/alice/toy" + query).text)

    assert versions("") == ["1.2.0", "1.1.0", "1.0.0"]
    assert versions("?sort=version") == ["1.0.0", "1.1.0", "1.2.0"]
    assert versions("?state=passed") == ["1.1.0", "1.0.0"]
    assert versions("?state=queued&sort=version") == ["1.2.0"]
    assert versions("?sort=review")[-1] == "1.2.0"  # passed < queued


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("?sort=bogus", "sort &#39;bogus&#39; is not a column of this table"),
        ("?sort=--name", "sort &#39;--name&#39; is not a column"),
        ("?state=nope", "state &#39;nope&#39; is not one of passed"),
        ("?sort=%3Cscript%3Ealert(1)%3C/script%3E", "sort &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"),
    ],
)
def test_a_bad_parameter_is_ignored_and_said(hub: Any, site: dict[str, Any], query: str, said: str) -> None:
    for path in ("/", "/bob", "/alice/toy"):
        r = get(hub, path + query)
        assert r.status_code == 200, path
        assert said in r.text and "<script>" not in r.text
    assert _refs(get(hub, "/" + query).text) == ["alice/toy", "bob/other"]  # the default order
    assert "state=nope" not in get(hub, "/?state=nope").text.split("<table")[1]  # links drop it


def test_a_long_bad_parameter_is_cut_in_the_note(hub: Any, site: dict[str, Any]) -> None:
    text = _text(get(hub, "/?sort=" + "x" * 5000).text)
    assert "x" * 40 + "…" in text and "x" * 41 not in text


@pytest.mark.slow
def test_the_leaderboard_sorts_its_rankings_by_get_parameter(hub: Any, site: dict[str, Any]) -> None:
    def models(query: str) -> list[str]:
        html = get(hub, "/alice/toy/leaderboard" + query).text
        column = html.split('<section class="column"')[1].split("</section>")[0]
        tbody = column.split("<tbody>")[1].split("</tbody>")[0]
        return [_text(c) for c in re.findall(r"<tr><td[^>]*>.*?</td><td>(.*?)</td>", tbody)]

    ranked = models("")
    assert models("?sort=rank") == ranked
    by_name = models("?sort=model")
    assert by_name == sorted(by_name, key=str.casefold) and set(by_name) == set(ranked)
    assert models("?sort=-model") == by_name[::-1]
    html = get(hub, "/alice/toy/leaderboard?sort=bogus").text
    assert "sort &#39;bogus&#39; is not a column" in html and models("?sort=bogus") == ranked
    # the filter form keeps the order
    assert (
        '<input type="hidden" name="sort" value="-model">'
        in get(hub, "/alice/toy/leaderboard?sort=-model").text
    )


def test_the_card_shows_the_seed_the_run_set(hub: Any, site: dict[str, Any]) -> None:
    html = get(hub, "/alice/toy/v/1.0.0").text
    settings = html.split("Sampling settings")[1].split("</table>")[0]
    head = re.findall(r"<th>(.*?)</th>", settings)
    assert "seed" in head and "environment arguments" in head
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in settings.split("<tbody>")[1].split("</tr>")[:-1]]
    seeds = [r[head.index("seed")] for r in rows]
    assert seeds and all(
        s == "per rollout, from run seed 0" for s in seeds
    )  # write_run's seed, not a default


def test_the_migration_gives_existing_versions_a_zero_count(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        conn.execute(
            text(
                "INSERT INTO owners (name, kind, is_admin, created_at) VALUES ('o', 'user', 0, '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO environments (owner_id, env_id, distribution, project, private, flagged,"
                " summary, tags, license, created_at)"
                " VALUES (1, 'e', 'e', 'e', 0, '', '', '', '', '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO versions (environment_id, version, manifest_sha256, content_hash,"
                " requires_python, readme, state, report, yanked, yank_reason, uploaded_at)"
                " VALUES (1, '0.1', 'm', 'c', '', '', 'passed', '', 0, '', '2026-01-01')"
            )
        )
    migrate(engine)
    with engine.begin() as conn:
        assert conn.execute(text("SELECT downloads FROM versions")).scalar() == 0
        conn.execute(text("UPDATE versions SET downloads = downloads + 1"))
        assert conn.execute(text("SELECT downloads FROM versions")).scalar() == 1
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
        columns = {r[1] for r in conn.execute(text("PRAGMA table_info(versions)"))}
        assert "downloads" not in columns and "readme_html" in columns


def test_the_cross_leaderboard_sorts_by_model_or_coverage(hub: Any, site: dict[str, Any]) -> None:
    def models(query: str) -> list[str]:
        html = get(hub, "/leaderboard" + query).text
        tbody = html.split('<div class="board">')[1].split("<tbody>")[1].split("</tbody>")[0]
        return re.findall(r"<tr><td[^>]*>(.*?)</td>", tbody)

    default = models("")
    assert sorted(default) == sorted(set(default)) and len(default) >= 2
    assert models("?sort=model") == sorted(default, key=str.casefold)
    assert models("?sort=-model") == sorted(default, key=str.casefold)[::-1]
    assert models("?sort=-coverage") == default
    html = get(hub, "/leaderboard?sort=rank").text  # a key of the other board
    assert "sort &#39;rank&#39; is not a column" in html and models("?sort=rank") == default


def test_concurrent_downloads_lose_no_count(hub: Any, site: dict[str, Any]) -> None:
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from serving import serve_http

    n_threads, each = 6, 5
    with serve_http(hub.client.app) as url:
        target = f"{url}/files/{site['sha']}/{WHEEL}"

        def download(_: int) -> int:
            for _ in range(each):
                with urllib.request.urlopen(target, timeout=30) as r:
                    r.read()
            return each

        with ThreadPoolExecutor(n_threads) as pool:
            done = sum(pool.map(download, range(n_threads)))
    with hub.sessions()() as s:
        assert s.query(Version).filter_by(version="1.1.0").one().downloads == done == n_threads * each
