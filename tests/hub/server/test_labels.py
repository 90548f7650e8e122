"""Labels on pushed rollouts: who may label, superseding and history, the page helpers, and the
label file ``verihub fidelity`` reads (through the API and ``verihub labels pull``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labels_kit import label_path, post_label, seed_with_reviewer, stored_rollouts, toy_env  # noqa: E402

from hub.env.aio import run as run_sync
from hub.review.fidelity import measure, read_labels
from hub.server.core.models import Run


@pytest.fixture
def seeded(hub: Any, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    return seed_with_reviewer(hub, tmp_path / "seed")


def test_reviewers_and_owners_label_others_are_refused(seeded: tuple[Any, dict[str, str]]) -> None:
    hub, ids = seeded
    strong = ids["strong"]  # alice's public run of alice/toy
    r = post_label(hub, "rita", strong, 0, "correct", "checked by hand")
    assert r.status_code == 201, r.text
    assert (r.json()["author"], r.json()["value"], r.json()["rollout"]) == ("rita", "correct", 0)
    assert post_label(hub, "alice", strong, 1, "incorrect").status_code == 201  # the owner
    assert post_label(hub, "root", strong, 2, "unclear").status_code == 201  # an admin
    # bob pushed a run of alice/toy but neither owns the environment nor reviews
    assert post_label(hub, "bob", ids["weak"], 0, "correct").status_code == 403
    assert post_label(hub, "bob", strong, 0, "correct").status_code == 403
    assert post_label(hub, "rita_read", strong, 0, "correct").status_code == 403  # a read token
    assert post_label(hub, None, strong, 0, "correct").status_code == 401
    # runs rita cannot see are not found, whatever her role
    assert post_label(hub, "rita", ids["hidden"], 0, "correct").status_code == 404
    assert post_label(hub, "rita", ids["secret"], 0, "correct").status_code == 404
    assert hub.client.get(label_path(ids["hidden"], 0), headers=hub.auth("rita")).status_code == 404
    # bad input
    assert post_label(hub, "rita", strong, 999, "correct").status_code == 404
    assert post_label(hub, "rita", strong, 0, "great").status_code == 400
    assert post_label(hub, "rita", strong, 0, "correct", "x" * 5000).status_code == 413
    r = hub.client.post(label_path(strong, 0), content=b"[1]", headers=hub.auth("rita"))
    assert r.status_code == 400


def test_a_new_label_supersedes_and_the_history_stays(seeded: tuple[Any, dict[str, str]]) -> None:
    hub, ids = seeded
    strong = ids["strong"]
    assert post_label(hub, "rita", strong, 3, "correct", "first look").status_code == 201
    assert (
        post_label(hub, "alice", strong, 3, "reward_hack", "answer copied from the prompt").status_code == 201
    )
    shown = hub.client.get(label_path(strong, 3)).json()  # public run: anyone may read
    assert shown["current"]["value"] == "reward_hack" and shown["current"]["author"] == "alice"
    assert [(h["author"], h["value"], h["note"]) for h in shown["history"]] == [
        ("alice", "reward_hack", "answer copied from the prompt"),
        ("rita", "correct", "first look"),
    ]
    assert hub.client.get(label_path(strong, 4)).json() == {"current": None, "history": []}


def test_counts_and_agreement_for_the_pages(seeded: tuple[Any, dict[str, str]]) -> None:
    from hub.server.results.labels import agreement, current_labels, label_counts, label_counts_many

    hub, ids = seeded
    strong = ids["strong"]
    rollouts = stored_rollouts(hub, strong)
    passed = [i for i, r in enumerate(rollouts) if r.passed]
    failed = [i for i, r in enumerate(rollouts) if not r.passed]
    # agree on two passes and a fail, disagree on one pass (a hack) and one fail, plus an unclear
    plan = [
        (passed[0], "correct"),
        (passed[1], "correct"),
        (failed[0], "incorrect"),
        (passed[2], "reward_hack"),
        (failed[1], "correct"),
        (passed[3], "unclear"),
    ]
    for index, value in plan:
        assert post_label(hub, "rita", strong, index, value).status_code == 201
    assert post_label(hub, "rita", strong, passed[0], "incorrect").status_code == 201  # then superseded
    assert post_label(hub, "rita", strong, passed[0], "correct").status_code == 201
    storage = hub.client.app.state.storage
    with hub.sessions()() as s:
        run = s.query(Run).filter_by(public_id=strong).one()
        counts = label_counts(s, run)
        assert (counts.rollouts, counts.labelled) == (len(rollouts), 6)
        assert counts.by_value == {"correct": 3, "incorrect": 1, "reward_hack": 1, "unclear": 1}
        other = s.query(Run).filter_by(public_id=ids["weak"]).one()
        many = label_counts_many(s, [run, other])
        assert many[run.id] == counts and (many[other.id].labelled, many[other.id].rollouts) == (0, 32)
        agree = agreement(s, storage, [run])
        assert (agree.rate.k, agree.rate.n, agree.false_pass, agree.false_fail) == (3, 5, 1, 1)
        low, high = agree.rate.ci95
        assert 0.0 < low < 0.6 < high < 1.0  # Wilson 95% around 3/5
        assert {k[1] for k in current_labels(s, [run])} == {i for i, _ in plan}


def test_label_file_round_trip_through_fidelity(seeded: tuple[Any, dict[str, str]], tmp_path: Path) -> None:
    hub, ids = seeded
    strong, weak = ids["strong"], ids["weak"]
    for index, value in ((0, "correct"), (1, "reward_hack"), (2, "unclear"), (3, "incorrect")):
        assert post_label(hub, "rita", strong, index, value).status_code == 201
    assert post_label(hub, "alice", weak, 0, "correct").status_code == 201
    assert post_label(hub, "rita", ids["hidden"], 0, "correct").status_code == 404
    url = "/api/v1/envs/alice/toy/1.0.0/labels"
    body = hub.client.get(url).text
    lines = [json.loads(x) for x in body.splitlines()]
    assert len(lines) == 4  # the unclear one is left out
    assert {(x["run"], x["rollout"], x["label"]) for x in lines} == {
        (strong, 0, True),
        (strong, 1, False),
        (strong, 3, False),
        (weak, 0, True),
    }
    assert all(x["response"] == "Answer: 42" and x["task_id"].startswith("t") for x in lines)
    assert all(x["prompt"] == f"Solve task {x['task_id']}." for x in lines)  # matched when ids are not
    assert hub.client.get(url, params={"format": "json"}).json() == lines
    assert hub.client.get("/api/v1/envs/bob/secret/1.0.0/labels").status_code == 404
    assert hub.client.get("/api/v1/envs/alice/toy/9.9.9/labels").status_code == 404
    path = tmp_path / "labels.jsonl"
    path.write_text(body, encoding="utf-8")
    report = run_sync(measure(toy_env(), read_labels(path), source=str(path)))
    # every response is 'Answer: 42', which the grader passes: the two labelled right agree,
    # the two labelled wrong (a hack and an incorrect) are false positives
    assert (report.true_positive, report.false_positive, report.n) == (2, 2, 4)
    assert report.false_positive_rate.k == 2 and report.accuracy.k == 2


@pytest.mark.slow
def test_labels_pull_writes_the_file_fidelity_reads(
    seeded: tuple[Any, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``verihub labels pull`` against the application through the client's own request function."""
    import hub.client.labels as client_labels
    from hub.client.api import HubError

    hub, ids = seeded
    assert post_label(hub, "rita", ids["strong"], 5, "incorrect", "no working shown").status_code == 201

    def over_testclient(
        base: str, path: str, *, token: str | None = None, query: Any = None, **_: Any
    ) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = hub.client.get(path, params=query, headers=headers)
        if r.status_code >= 400:
            raise HubError(f"the hub answered {r.status_code}: {r.json()['error']}", r.status_code)
        return r.json()

    monkeypatch.setattr(client_labels, "hub_request", over_testclient)
    out = tmp_path / "pulled.jsonl"
    which, n = client_labels.pull_labels("http://hub", "alice/toy", token=None, out=out)
    assert (which, n) == ("alice/toy@1.1.0", 0)  # the newest version has no labels
    which, n = client_labels.pull_labels("http://hub", "alice/toy@1.0.0", token=hub.tokens["alice"], out=out)
    assert (which, n) == ("alice/toy@1.0.0", 1)
    (record,) = read_labels(out)
    assert record.label is False and record.task_id is not None
    report = run_sync(measure(toy_env(), [record], source=str(out)))
    assert report.false_positive == 1
    with pytest.raises(HubError, match="404"):
        client_labels.pull_labels("http://hub", "bob/secret@1.0.0", token=hub.tokens["rita"], out=out)


def test_the_rollout_pages_review_helper(seeded: tuple[Any, dict[str, str]]) -> None:
    from hub.server.accounts.users import Principal
    from hub.server.core.models import Owner
    from hub.server.results.labels import LabelError
    from hub.server.results.rollout_review import rollout_review

    hub, ids = seeded
    assert post_label(hub, "rita", ids["strong"], 2, "unclear").status_code == 201
    assert post_label(hub, "alice", ids["strong"], 2, "correct", "verified").status_code == 201
    storage = hub.client.app.state.storage
    with hub.sessions()() as s:

        def principal(name: str) -> Principal:
            user = s.query(Owner).filter_by(name=name).one()
            return Principal(user_id=user.id, name=name, scope="push", is_admin=user.is_admin)

        seen = rollout_review(s, storage, principal("rita"), ids["strong"], 2)
        assert seen.current is not None and (seen.current.value, seen.current.author.name) == (
            "correct",
            "alice",
        )
        assert [h.value for h in seen.history] == ["correct", "unclear"] and seen.can_label
        assert seen.corrections == [] and seen.rollout.task_id.startswith("t")
        assert not rollout_review(s, storage, principal("bob"), ids["strong"], 2).can_label
        assert not rollout_review(s, storage, None, ids["strong"], 2).can_label
        with pytest.raises(LabelError):
            rollout_review(s, storage, principal("rita"), ids["hidden"], 0)
