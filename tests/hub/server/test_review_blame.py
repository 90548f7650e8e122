"""Reviews blame the right party: a review that fails only on time limits while the host is
loaded is tried again, and after the last try ends ``error`` (the hub's fault), never ``failed``;
any other failure, or a quiet host, stays the package's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from hub.server.core.config import HubConfig
from hub.server.core.db import make_engine, sessions
from hub.server.core.models import EnvFile, Environment, Job, Version
from hub.server.reviews.blame import LOADED_PER_CORE, limits_only, outcome
from hub.server.reviews.jobs import MAX_ATTEMPTS, claim, finish, release


def _report(*fails: str, problems: tuple[str, ...] = ("the check fails now",)) -> dict[str, Any]:
    results = [{"name": "grading_time", "status": "fail", "reason": r} for r in fails]
    results.append({"name": "installs", "status": "pass", "reason": ""})
    return {"passed": False, "problems": list(problems), "check": {"results": results}}


SLOW = "the check ran past its wall-clock limit during 'grading probe 'empty''"
BUSY, QUIET = LOADED_PER_CORE + 1.5, LOADED_PER_CORE / 4


@pytest.mark.parametrize(
    ("report", "load", "attempt", "expected"),
    [
        ({"passed": True}, BUSY, 1, "passed"),
        (_report(SLOW), BUSY, 1, "retry"),
        (_report(SLOW), BUSY, MAX_ATTEMPTS, "error"),
        (_report(SLOW), QUIET, 1, "failed"),  # a quiet host: the package was too slow
        (_report(SLOW, "the grader accepts an empty answer"), BUSY, 1, "failed"),  # a real failure too
        (_report(SLOW, problems=("the wheel's hash differs from the manifest",)), BUSY, 1, "failed"),
        (_report(), BUSY, 1, "failed"),  # no failing check at all: not a time limit
        (_report("the environment process died (killed by the CPU limit of 60s)"), BUSY, 2, "retry"),
    ],
)
def test_outcome(report: dict[str, Any], load: float, attempt: int, expected: str) -> None:
    assert outcome(report, attempt=attempt, max_attempts=MAX_ATTEMPTS, load_per_core=load) == expected


def test_limits_only_reads_malformed_reports_as_not_limits() -> None:
    assert not limits_only({})
    assert not limits_only({"check": "text", "problems": None})
    assert not limits_only({"check": {"results": [None, 3]}})


@pytest.fixture
def queued(tmp_path: Path) -> Iterator[tuple[sessionmaker[Session], int]]:
    from hub.server.accounts.users import add_user
    from hub.server.admin import open_hub

    config = HubConfig(data=tmp_path / "hub", lease_s=30.0)
    with open_hub(config) as s:
        owner = add_user(s, "alice")
        env = Environment(owner_id=owner.id, env_id="e", distribution="e", project="e")
        version = Version(environment=env, version="0.1", manifest_sha256="m", content_hash="c")
        s.add(EnvFile(version=version, kind="bundle", filename="b.tar.gz", sha256="ab" * 32, size=1))
        s.add(Job(version=version, state="queued"))
        s.flush()
        vid = version.id
    engine = make_engine(config.database)
    yield sessions(engine), vid
    engine.dispose()


def test_a_released_review_is_taken_again_and_can_end_as_the_hubs_error(
    queued: tuple[sessionmaker[Session], int],
) -> None:
    make, vid = queued
    first = claim(make, "w1", 30.0)
    assert first is not None and first.attempt == 1
    assert release(make, first, "w1")
    with make() as s:
        assert s.get(Version, vid).state == "queued"  # type: ignore[union-attr]
    again = claim(make, "w2", 30.0)
    assert again is not None and again.attempt == 2  # the try is counted
    assert not release(make, again, "w1")  # not w1's any more
    assert finish(make, again, "w2", passed=False, report={"problems": ["slow host"]}, error=True)
    with make() as s:
        version = s.get(Version, vid)
        assert version is not None and version.state == "error"
    assert claim(make, "w3", 30.0) is None  # an error is final until a new push
