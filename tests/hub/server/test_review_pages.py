"""The rollout page's label and correction forms, and labels on the run page and the eval card:
CSRF and sessions, who may label (403) and see (404), refusals shown on the page, hostile notes
shown as text, the label filter, counts and agreement."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accounts_kit import PASSWORD, Site, csrf, make_site, signed_in  # noqa: E402
from labels_kit import FakeGrader, ServedHub, stored_rollouts  # noqa: E402
from results_seed import seed  # noqa: E402

from hub.server.accounts.passwords import set_password  # noqa: E402
from hub.server.accounts.users import add_user  # noqa: E402
from hub.server.admin import open_hub  # noqa: E402
from hub.server.core.models import EnvFile, Run  # noqa: E402
from hub.server.results.labels import agreement  # noqa: E402
from hub.server.results.rollout_store import backfill  # noqa: E402

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> \u202eevil'


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Site, dict[str, str], FakeGrader]]:
    for s in make_site(tmp_path):
        with open_hub(s.config) as session:
            add_user(session, "rita", reviewer=True)
            set_password(session, "rita", PASSWORD)
            set_password(session, "bob", PASSWORD)
        served = ServedHub(s.config, s.browser(), {})
        ids = seed(served, tmp_path / "runs").ids
        backfill(s.app.state.sessions, s.app.state.storage)
        sha = s.app.state.storage.put_bytes(b"not really a wheel")  # the fake grader never opens it
        with s.app.state.sessions() as session, session.begin():
            run = session.query(Run).filter_by(public_id=ids["strong"]).one()
            wheel = EnvFile(version_id=run.version_id, kind="wheel", filename="toy-1.0.0-py3-none-any.whl")
            session.add(wheel)
            wheel.sha256, wheel.size = sha, 18
        grader = FakeGrader()
        s.app.state.grade_correction = grader
        yield s, ids, grader


def _rollout(run: str, idx: int) -> str:
    return f"/runs/{run}/rollouts/{idx}"


def _label(client: Any, run: str, idx: int, value: str, note: str = "", token: str | None = None) -> Any:
    token = csrf(client, _rollout(run, idx)) if token is None else token
    return client.post(
        _rollout(run, idx) + "/label", data={"value": value, "note": note, "csrf_token": token}
    )


def test_the_label_form_saves_through_the_service(site: tuple[Site, dict[str, str], FakeGrader]) -> None:
    s, ids, _ = site
    run = ids["strong"]
    rita = signed_in(s, "rita")
    page = rita.get(_rollout(run, 0)).text
    assert 'action="/runs/rstrong0123/rollouts/0/label"' in page and 'name="value"' in page
    r = _label(rita, run, 0, "reward_hack", HOSTILE)
    assert r.status_code == 303 and r.headers["location"] == _rollout(run, 0) + "#labels"
    alice = signed_in(s, "alice")  # the environment's owner supersedes
    assert _label(alice, run, 0, "correct", "checked again").status_code == 303
    page = s.browser().get(_rollout(run, 0)).text  # anyone may read a public run's labels
    current = page.split('class="label-current"', 1)[1].split("</p>", 1)[0]
    assert "correct" in current and "alice" in current and "reward hack" not in current
    assert "History: 2 labels" in page and "checked again" in page
    # the hostile note is text: escaped, its bidi control shown as a token, no live markup
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "\u202e" not in page and "U+202E" in page
    assert "Sign in</a> as a reviewer" in page and 'action="/runs/rstrong0123/rollouts/0/label"' not in page
    api = s.browser().get(f"/api/v1/runs/{run}/rollouts/0/labels").json()
    assert [(h["author"], h["value"]) for h in api["history"]] == [
        ("alice", "correct"),
        ("rita", "reward_hack"),
    ]


def test_the_label_form_refuses_what_the_api_refuses(site: tuple[Site, dict[str, str], FakeGrader]) -> None:
    s, ids, _ = site
    run = ids["strong"]
    rita = signed_in(s, "rita")
    good = csrf(rita, _rollout(run, 1))
    assert _label(rita, run, 1, "correct", token="").status_code == 403  # no token
    assert _label(rita, run, 1, "correct", token="0" * len(good)).status_code == 403  # a wrong one
    r = rita.post(_rollout(run, 1) + "/label", data={"value": "correct"})  # the field left out
    assert r.status_code == 403 and "security token" in r.text
    anonymous = s.browser()
    r = anonymous.post(_rollout(run, 1) + "/label", data={"value": "correct", "csrf_token": good})
    assert r.status_code == 401
    bob = signed_in(s, "bob")  # pushed a run of alice/toy; neither owns it nor reviews
    assert 'rollouts/1/label"' not in bob.get(_rollout(run, 1)).text  # no form for him
    r = _label(bob, run, 1, "correct")
    assert r.status_code == 403 and "only reviewers" in r.text
    # runs rita cannot see are not found, whatever her role: her token from a visible page
    assert _label(rita, ids["hidden"], 0, "correct", token=good).status_code == 404
    assert _label(rita, ids["secret"], 0, "correct", token=good).status_code == 404
    r = _label(rita, run, 1, "great")  # a bad value: the page again, with the service's message
    assert r.status_code == 400 and "a label is one of correct" in r.text and 'id="message"' in r.text
    r = _label(rita, run, 1, "correct", "x" * 5000)
    assert r.status_code == 413 and "at most 4000" in r.text
    assert s.browser().get(f"/api/v1/runs/{run}/rollouts/1/labels").json()["history"] == []


def _assistant_fields(page: str) -> dict[str, str]:
    found = re.findall(r'<textarea name="(turn_\d+)"[^>]*>\n(.*?)</textarea>', page, re.S)
    return {name: text for name, text in found}


def test_the_correction_form_grades_and_lists_copies(site: tuple[Site, dict[str, str], FakeGrader]) -> None:
    s, ids, grader = site
    run = ids["strong"]
    rollouts = stored_rollouts(ServedHub(s.config, s.browser(), {}), run)
    idx = next(i for i, r in enumerate(rollouts) if not r.passed)
    rita = signed_in(s, "rita")
    page = rita.get(_rollout(run, idx)).text
    fields = _assistant_fields(page)
    messages = rollouts[idx].messages
    assistant = [i for i, m in enumerate(messages) if m.role == "assistant"]
    assert sorted(fields) == sorted(f"turn_{i}" for i in assistant)  # user turns are not fields
    last = f"turn_{assistant[-1]}"
    token = csrf(rita, _rollout(run, idx))
    path = _rollout(run, idx) + "/correct"
    # unchanged: refused on the page with the service's message, nothing graded or stored
    r = rita.post(path, data={**fields, "csrf_token": token})
    assert r.status_code == 422 and "same transcript" in r.text and not grader.jobs
    # a changed user turn (sent by hand: the form has no field for it) is refused, naming it
    user = next(i for i, m in enumerate(messages) if m.role == "user")
    r = rita.post(path, data={**fields, f"turn_{user}": "something else", "csrf_token": token})
    assert r.status_code == 422 and f"turn {user} is a user turn" in r.text
    # an edit, with a browser's line ends: graded and stored, back to the page
    data = {
        **fields,
        last: "Let me redo it.\r\nAnswer: 42",
        "note": "fixed the arithmetic",
        "csrf_token": token,
    }
    r = rita.post(path, data=data)
    assert r.status_code == 303 and r.headers["location"] == _rollout(run, idx) + "#corrections"
    assert grader.jobs[-1].rollout.messages[assistant[-1]].content == "Let me redo it.\nAnswer: 42"
    page = s.browser().get(_rollout(run, idx)).text
    table = page.split('<table class="corrections">', 1)[1].split("</table>", 1)[0]
    assert "rita" in table and "passed" in table and "fixed the arithmetic" in table
    api = s.browser().get(f"/api/v1/runs/{run}/rollouts/{idx}/corrections").json()
    assert len(api) == 1 and api[0]["passed"] and api[0]["author"] == "rita" and not api[0]["rerun"]
    # re-running the environment's step, refused by a non-deterministic environment
    grader.deterministic = False
    r = rita.post(path, data={**data, "rerun_step": "1"})
    assert r.status_code == 422 and "not deterministic" in r.text
    assert "Let me redo it." in r.text and "fixed the arithmetic" in r.text  # the edit is kept
    assert len(s.browser().get(f"/api/v1/runs/{run}/rollouts/{idx}/corrections").json()) == 1
    # the same refusals as the label form
    assert rita.post(path, data={**data, "csrf_token": ""}).status_code == 403
    assert s.browser().post(path, data=data).status_code == 401
    bob = signed_in(s, "bob")
    assert "Save a corrected copy" not in bob.get(_rollout(run, idx)).text
    assert bob.post(path, data={**data, "csrf_token": csrf(bob, _rollout(run, idx))}).status_code == 403
    hidden = _rollout(ids["hidden"], 0) + "/correct"
    assert rita.post(hidden, data={last: "x", "csrf_token": token}).status_code == 404


def test_the_run_page_shows_filters_and_counts_labels(site: tuple[Site, dict[str, str], FakeGrader]) -> None:
    s, ids, _ = site
    run = ids["strong"]
    rollouts = stored_rollouts(ServedHub(s.config, s.browser(), {}), run)
    passed = [i for i, r in enumerate(rollouts) if r.passed]
    failed = [i for i, r in enumerate(rollouts) if not r.passed]
    rita = signed_in(s, "rita")
    page = rita.get(f"/runs/{run}").text
    assert "Human labels: none yet" in page and 'name="label"' in page
    plan = [
        (passed[0], "correct"),
        (passed[1], "reward_hack"),
        (failed[0], "incorrect"),
        (failed[1], "unclear"),
    ]
    for idx, value in plan:
        assert _label(rita, run, idx, value).status_code == 303
    assert _label(rita, run, passed[0], "incorrect").status_code == 303  # superseded below
    assert _label(rita, run, passed[0], "correct").status_code == 303
    page = s.browser().get(f"/runs/{run}?per_page=100").text
    # 4 labelled of 32; decisive: correct on a pass, incorrect on a fail agree; the hack disagrees
    assert "4 of 32 rollouts labelled; grader agrees on 2 of 3: 67%" in page
    assert "false passes: 1, false fails: 0" in page
    with s.app.state.sessions() as session:  # the rows' verdicts and the archive's agree
        row = session.query(Run).filter_by(public_id=run).one()
        from_rows = agreement(session, s.app.state.storage, [row])
        row.rollouts_stored = False  # not committed: read the archive instead
        from_archive = agreement(session, s.app.state.storage, [row])
        assert from_rows == from_archive and (from_rows.rate.k, from_rows.rate.n) == (2, 3)
        session.rollback()
    cells = re.findall(r'rollouts/(\d+)">\d+</a></td>.*?<td class="nw">(.*?)</td>\s*</tr>', page, re.S)
    shown = {int(i): re.sub(r"<[^>]+>", "", c) for i, c in cells}
    assert len(shown) == 32 and shown[passed[0]] == "correct" and shown[passed[1]] == "reward hack"
    assert sum(v == "–" for v in shown.values()) == 28

    def listed(label: str) -> set[int]:
        html = s.browser().get(f"/runs/{run}?per_page=100&label={label}").text
        return {int(i) for i in re.findall(r'<td class="num"><a href="/runs/[^/]+/rollouts/(\d+)">', html)}

    assert listed("correct") == {passed[0]}  # its older "incorrect" does not count
    assert listed("incorrect") == {failed[0]} and listed("reward_hack") == {passed[1]}
    assert listed("any") == {i for i, _ in plan}
    assert listed("none") == set(range(32)) - {i for i, _ in plan}
    html = s.browser().get(f"/runs/{run}?label=great").text
    assert "label &#39;great&#39; is not one of" in html and len(listed("")) == 32
    assert "label=correct" in s.browser().get(f"/runs/{run}?label=correct&per_page=1").text  # kept in links
    card = s.browser().get("/alice/toy/v/1.0.0").text
    assert "<th>human labels</th>" in card
    row = card.split(f'id="run-{run}"', 1)[1].split("</tr>", 1)[0]
    assert "4 of 32 rollouts labelled; grader agrees on 2 of 3" in row
    weak = card.split(f'id="run-{ids["weak"]}"', 1)[1].split("</tr>", 1)[0]
    assert "labelled" not in weak
