"""Verifier cards on the hub: the card a review measured is stored on the version and shown on the
environment page, the eval card and the API; a version without one says "error rate not
measured", whatever its package or bundle claims about itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hub.review.check.report import CheckReport
from hub.review.fidelity import ConfusionExample, FidelityReport, rate
from hub.server.core.models import PASSED, Environment, Owner, Version
from hub.server.reviews.jobs import measured_card
from hub.server.web.verifier_card import NOT_MEASURED, card_json, card_view

SHA = "ab" * 32


def _card(tp: int, fn: int, fp: int, tn: int, **extra: Any) -> FidelityReport:
    n = tp + fn + fp + tn
    return FidelityReport(
        env_id="toy",
        env_version="1.0.0",
        labels="verihub_toy/labels.jsonl",
        labels_sha256=SHA,
        n=n,
        true_positive=tp,
        false_negative=fn,
        false_positive=fp,
        true_negative=tn,
        accuracy=rate(tp + tn, n),
        false_positive_rate=rate(fp, fp + tn),
        false_negative_rate=rate(fn, tp + fn),
        grader_failed=0,
        errors=0,
        **extra,
    )


def _review_report(card: FidelityReport | None, **top: Any) -> dict[str, Any]:
    """The shape hub.server.reviews.review_child writes, with the check's card (if any)."""
    check = CheckReport(target="x.whl", passed=True, verifier_card=card)
    return {"passed": True, "problems": [], "check": check.model_dump(mode="json"), **top}


def test_card_view_reads_the_measured_figures() -> None:
    stored = measured_card(_review_report(_card(90, 10, 3, 97)))
    view = card_view(stored)
    assert view is not None
    assert (view.n, view.labels_sha256, view.labels) == (200, SHA, "verihub_toy/labels.jsonl")
    assert view.accuracy.text.startswith("93.50% [") and view.accuracy.text.endswith("(187/200)")
    assert view.false_positive_rate.percent == "3.00%" and view.false_positive_rate.n == 100
    assert view.false_negative_rate.text.endswith("(10/100)")
    low, high = (float(x) for x in view.false_negative_rate.interval.split(", "))
    assert low < 10.0 < high  # the Wilson interval around 10%
    api = card_json(stored)
    assert api is not None and api["measured_by"] == "hub review"
    assert api["false_positive_rate"]["k"] == 3 and api["false_positive_rate"]["value"] == pytest.approx(0.03)
    assert api["labels_sha256"] == SHA


def test_an_empty_rate_shows_as_none() -> None:
    view = card_view(measured_card(_review_report(_card(5, 0, 0, 0))))
    assert view is not None and view.false_positive_rate.text == "- (0 of 0)"


@pytest.mark.parametrize(
    "stored",
    [
        "",
        "not json",
        "[1, 2]",
        json.dumps({"n": 3}),
        json.dumps({"n": -1, "accuracy": {"k": 1, "n": 1, "ci95": [0, 1]}}),
    ],
)
def test_what_is_not_a_card_is_not_measured(stored: str) -> None:
    assert card_view(stored) is None and card_json(stored) is None


def test_a_rate_that_does_not_add_up_is_refused() -> None:
    raw = json.loads(measured_card(_review_report(_card(90, 10, 3, 97))))
    raw["false_positive_rate"]["k"] = 101  # more than its n
    assert card_view(json.dumps(raw)) is None
    raw = json.loads(measured_card(_review_report(_card(90, 10, 3, 97))))
    raw["accuracy"]["ci95"] = [0.2, float("nan")]
    assert card_view(json.dumps(raw)) is None


def test_only_the_reviews_own_check_card_is_stored() -> None:
    claimed = _card(1000, 0, 0, 1000).model_dump(mode="json")
    # a card anywhere but in the check the review ran is a claim, never stored
    assert measured_card(_review_report(None, verifier_card=claimed)) == ""
    assert measured_card({"passed": True, "problems": [], "check": None, "verifier_card": claimed}) == ""
    assert measured_card({"passed": False, "problems": ["the review crashed"]}) == ""
    example = ConfusionExample(kind="false_positive", line=3, task_id="t", response="secret-ish text")
    stored = measured_card(_review_report(_card(9, 1, 0, 10, examples=[example])))
    assert "secret-ish" not in stored and json.loads(stored)["n"] == 20


def _seed(hub: Any) -> None:
    with hub.sessions()() as session:
        who = session.query(Owner).filter_by(name="alice").one()
        env = Environment(
            owner_id=who.id, env_id="toy", distribution="alice-toy", project="alice-toy", summary="toy"
        )
        session.add(env)
        session.flush()
        claimed = _card(1000, 0, 0, 1000).model_dump(mode="json")
        rows = {
            # measured by the review
            "1.0.0": _review_report(_card(90, 10, 3, 97)),
            # no label file; the bundle's recorded report and the package claim a perfect card
            "1.1.0": _review_report(None, verifier_card=claimed, recorded_check={"verifier_card": claimed}),
        }
        for version, report in rows.items():
            session.add(
                Version(
                    environment_id=env.id,
                    version=version,
                    manifest_sha256="0" * 64,
                    content_hash="sha256:" + "0" * 64,
                    state=PASSED,
                    report=json.dumps(report),
                    verifier_card=measured_card(report),
                    summary="toy",
                )
            )
        session.commit()


def test_pages_and_api_show_the_measured_card_or_not_measured(hub: Any) -> None:
    _seed(hub)
    page = hub.client.get("/alice/toy").text
    assert page.count('class="verifier-card"') == 2
    assert "93.50%" in page and SHA in page and NOT_MEASURED in page
    assert "2000/2000" not in page  # the claimed card is shown nowhere
    measured = hub.client.get("/alice/toy/v/1.0.0").text
    assert "93.50%" in measured and "(3/100)" in measured and NOT_MEASURED not in measured
    unmeasured = hub.client.get("/alice/toy/v/1.1.0").text
    assert NOT_MEASURED in unmeasured and "2000/2000" not in unmeasured
    api = hub.client.get("/api/v1/envs/alice/toy/1.0.0").json()
    assert api["verifier_card"]["n"] == 200 and api["verifier_card"]["labels_sha256"] == SHA
    assert hub.client.get("/api/v1/envs/alice/toy/1.1.0").json()["verifier_card"] is None
    # `verihub status` prints the same card from the API, or says it was not measured
    from hub.cli.author import describe_review

    shown = "\n".join(describe_review(api))
    assert "accuracy 93.50% [" in shown and "(3/100)" in shown and SHA in shown
    unmeasured_status = hub.client.get("/api/v1/envs/alice/toy/1.1.0").json()
    assert NOT_MEASURED in "\n".join(describe_review(unmeasured_status))


def test_migration_gives_existing_versions_no_card(tmp_path: Path) -> None:
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
                "INSERT INTO owners (name, kind, is_admin, created_at) "
                "VALUES ('old', 'user', 0, '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO environments (owner_id, env_id, distribution, project, private, summary, "
                "tags, license, flagged, created_at) VALUES "
                "(1, 'toy', 'old-toy', 'old-toy', 0, '', '', '', '', '2026-01-01')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO versions (environment_id, version, manifest_sha256, content_hash, "
                "requires_python, readme, state, report, yanked, yank_reason, uploaded_at) VALUES "
                "(1, '1.0', 'x', 'y', '', '', 'passed', '', 0, '', '2026-01-01')"
            )
        )
    migrate(engine)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT verifier_card FROM versions")).scalar()
    assert stored == "" and card_view(stored) is None
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0005")
        columns = {r[1] for r in conn.execute(text("PRAGMA table_info(versions)"))}
        assert "verifier_card" not in columns
