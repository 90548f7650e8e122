"""Labels, corrections and the label file on a real PostgreSQL (a throwaway cluster on a unix
socket): the migration up and down, superseding, and the training endpoint."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from labels_kit import FakeGrader, ServedHub, post, post_label, seed_with_reviewer, transcript  # noqa: E402
from pg_cluster import pg_bin, postgres_cluster  # noqa: E402

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        pg_bin() is None or importlib.util.find_spec("psycopg") is None,
        reason="needs PostgreSQL (apt-get install postgresql) and psycopg (pip install 'verihub[hub]')",
    ),
]


def test_labels_and_corrections_on_postgres(
    tmp_path: Path, tokens_for: Callable[[Any], dict[str, str]]
) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import inspect
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig
    from hub.server.core.db import _MIGRATIONS, make_engine, migrate

    with postgres_cluster() as url:
        engine = make_engine(url)
        head = migrate(engine)
        assert head >= "0008"  # the labels revision is applied
        config = HubConfig(data=tmp_path / "hub", db_url=url, review_fast=True)
        tokens = tokens_for(config)
        with TestClient(create_app(config, auto_migrate=False)) as client:
            hub: Any = ServedHub(config, client, tokens)
            hub, ids = seed_with_reviewer(hub, tmp_path / "seed")
            strong = ids["strong"]
            assert post_label(hub, "rita", strong, 0, "correct").status_code == 201
            assert post_label(hub, "alice", strong, 0, "reward_hack", "copied").status_code == 201
            assert post_label(hub, "bob", strong, 0, "correct").status_code == 403
            shown = client.get(f"/api/v1/runs/{strong}/rollouts/0/labels").json()
            assert [h["value"] for h in shown["history"]] == ["reward_hack", "correct"]
            lines = client.get("/api/v1/envs/alice/toy/1.0.0/labels", params={"format": "json"}).json()
            assert [(x["rollout"], x["label"], x["author"]) for x in lines] == [(0, False, "alice")]
            client.app.state.grade_correction = FakeGrader()
            messages = transcript(hub, strong, 0)
            messages[-1]["content"] = "Answer: 42, shown step by step"
            fix = post(hub, "rita", strong, 0, {"messages": messages})
            assert fix.status_code == 201 and fix.json()["state"] == "error"  # no wheel on this version
            records = client.get("/api/v1/envs/alice/toy/1.0.0/training").json()
            assert [(r["label"], r["corrected"]) for r in records] == [("reward_hack", False)]
        cfg = Config()
        cfg.set_main_option("script_location", str(_MIGRATIONS))
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0005")
        assert not {"rollout_labels", "corrections"} & set(inspect(engine).get_table_names())
        assert migrate(engine) == head
        engine.dispose()
