"""Re-verification of pushed runs: the queue in the ``runs`` table, the sample
rule, and real regrades of a real ``arith`` run with the published wheel in the sandbox.

Run rows are inserted directly (pushing runs is another module's job): the run directory is the
bundle's ``eval/`` folder (a real evaluation of the published wheel), stored as a gzip tar of its
three files, with ``entry``/``summary`` computed by :func:`leaderboard.verify_run` as the hub does.
Forged runs are self-consistent (their summary is recomputed with ``SummaryBuilder`` so that
``verify_run`` accepts them): only regrading with the environment's own grader can catch them.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
import secrets
import shutil
import tarfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from graders.grade import Grade
from hub.env.types import Rollout, Task
from hub.run.metrics import SummaryBuilder
from hub.run.rundir import RunDir
from hub.sandbox import unavailable_reason
from hub.server.core.config import HubConfig
from hub.server.core.db import make_engine, sessions
from hub.server.core.models import EnvFile, Environment, Job, Owner, Run, Version, utcnow
from hub.server.core.storage import LocalStorage
from hub.server.results import reverify
from hub.server.results.reverify_child import draw_sample, sample_size
from hub.server.worker import work
from leaderboard import entry_from_run, verify_run

NEEDS_SANDBOX = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
RUN_FILES = ("config.json", "rollouts.jsonl", "summary.json")


# -- helpers -------------------------------------------------------------------------------------
def tar_run(run: Path, out: Path) -> Path:
    with tarfile.open(out, "w:gz") as tar:
        for name in RUN_FILES:
            tar.add(run / name, arcname=name)
    return out


def add_run(make: sessionmaker[Session], storage: LocalStorage, version_id: int, run: Path | None) -> int:
    """A pending Run row; ``run`` None stores no archive (its blob is missing)."""
    if run is None:
        archive_sha, entry, summary, content = "ab" * 32, "{}", "{}", secrets.token_hex(32)
    else:
        archive_sha = storage.put_file(tar_run(run, run.parent / f"{run.name}.tar.gz"))
        verified = verify_run(run)
        entry, summary = entry_from_run(verified).model_dump_json(), verified.summary.model_dump_json()
        content = verified.content_sha256.removeprefix("sha256:")
    with make() as s, s.begin():
        version = s.get(Version, version_id)
        assert version is not None
        row = Run(
            public_id=secrets.token_hex(8),
            version_id=version_id,
            owner_id=version.environment.owner_id,
            model="smollm2",
            archive_sha256=archive_sha,
            run_sha256=content,
            entry=entry,
            summary=summary,
        )
        s.add(row)
        s.flush()
        return row.id


def expire(make: sessionmaker[Session]) -> None:
    """Every lease ran out (as when the worker holding it died)."""
    with make() as s, s.begin():
        s.execute(update(Run).values(verify_lease_until=dt.datetime(2000, 1, 1)))


def run_row(make: sessionmaker[Session], run_id: int) -> Run:
    with make() as s:
        row = s.get(Run, run_id)
        assert row is not None
        return row


def rewrite(run: Path, rollouts: list[Rollout], *, rollouts_per_task: int | None = None) -> None:
    """Write ``rollouts`` into ``run`` and a summary recomputed from them (a self-consistent run)."""
    rundir = RunDir(run)
    config = rundir.load_config()
    if rollouts_per_task is not None:
        config = config.model_copy(update={"rollouts_per_task": rollouts_per_task})
        (run / "config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")
    recorded = rundir.load_summary()
    text = "".join(r.model_dump_json() + "\n" for r in rollouts)
    (run / "rollouts.jsonl").write_text(text, encoding="utf-8")
    builder = SummaryBuilder(
        env_id=recorded.env_id,
        env_version=recorded.env_version,
        model=recorded.model,
        rollouts_per_task=config.rollouts_per_task,
    )
    for t in recorded.per_task:
        builder.add_task(t.task_id)
    rundir.write_summary(builder.extend(rollouts).build())
    verify_run(run)  # still accepted by the leaderboard's checks


def flip(r: Rollout) -> Rollout:
    """The rollout with the opposite verdict, recorded consistently (reward, passed, grade)."""
    score = 0.0 if r.passed else 1.0
    grade = Grade(
        score=score, passed=not r.passed, status="incorrect" if r.passed else "correct", reason="forged"
    )
    return r.model_copy(update={"reward": score, "passed": not r.passed, "grade": grade})


def widen(rollouts: list[Rollout], copies: int, per_task: int) -> list[Rollout]:
    """Each rollout repeated ``copies`` times under new rollout indexes (same response, same verdict)."""
    return [
        r.model_copy(update={"rollout_index": r.rollout_index + k * per_task})
        for k in range(copies)
        for r in rollouts
    ]


# -- a hub with fake versions: the queue itself (no sandbox, no model) ----------------------------
@pytest.fixture
def queue(tmp_path: Path) -> Iterator[tuple[HubConfig, sessionmaker[Session], LocalStorage, int]]:
    """A migrated hub database with one version (its wheel blob absent); yields (config, sessions,
    storage, version id)."""
    from hub.server.accounts.users import add_user
    from hub.server.admin import open_hub

    config = HubConfig(data=tmp_path / "hub", lease_s=30.0)
    with open_hub(config) as s:
        owner = add_user(s, "alice")
        env = Environment(owner_id=owner.id, env_id="e", distribution="e", project="e")
        version = Version(environment=env, version="0.1", manifest_sha256="m", content_hash="c")
        s.add(
            EnvFile(
                version=version, kind="wheel", filename="e-0.1-py3-none-any.whl", sha256="ef" * 32, size=1
            )
        )
        s.flush()
        vid = version.id
    engine = make_engine(config.database)
    yield config, sessions(engine), LocalStorage(config.data), vid
    engine.dispose()


@pytest.mark.parametrize(
    ("total", "share", "expected"),
    [(0, 0.1, 0), (15, 0.1, 15), (20, 0.1, 20), (21, 0.1, 20), (75, 0.1, 20), (75, 0.5, 38),
     (199, 0.1, 20), (201, 0.1, 21), (1000, 0.1, 100), (1000, 1.0, 1000), (30, 0.0, 20)],
)  # fmt: skip
def test_sample_size_rule(total: int, share: float, expected: int) -> None:
    assert sample_size(total, share) == expected


def test_sample_is_drawn_unpredictably_and_recorded_in_order() -> None:
    keys = [f"t{i}#0" for i in range(1000)]
    first, second = draw_sample(keys, 0.1), draw_sample(keys, 0.1)
    assert len(first) == len(second) == 100 and len(set(first)) == 100
    assert first != second  # SystemRandom: equal draws have probability 1/C(1000, 100)
    assert first == [k for k in keys if k in set(first)]  # kept in file order
    seeded = draw_sample(keys, 0.1, random.Random(7))
    assert seeded == draw_sample(keys, 0.1, random.Random(7)) and set(seeded) <= set(keys)
    with pytest.raises(ValueError, match="between 0 and 1"):
        sample_size(10, 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        HubConfig(data=Path("x"), reverify_share=-0.1)


def test_only_one_worker_wins_a_run(queue: Any) -> None:
    _config, make, storage, vid = queue
    ids = [add_run(make, storage, vid, None) for _ in range(5)]
    first = reverify.claim(make, "a", 60.0)
    assert first is not None and first.run_id == ids[0] and first.attempt == 1
    assert first.wheel_sha256 == "ef" * 32 and first.wheel_filename.endswith(".whl")
    got: list[int] = [first.run_id]
    lock, barrier = threading.Lock(), threading.Barrier(3)

    def worker(name: str) -> None:
        barrier.wait()
        while (c := reverify.claim(make, name, 60.0)) is not None:
            with lock:
                got.append(c.run_id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == ids  # every run claimed exactly once, the held one not again
    assert reverify.claim(make, "b", 60.0) is None
    assert not reverify.finish(make, first, "b", state="verified", report={})  # not b's
    assert run_row(make, ids[0]).verify_state == "pending"
    assert reverify.finish(make, first, "a", state="verified", report={"n_differ": 0})
    row = run_row(make, ids[0])
    assert row.verify_state == "verified" and row.verified_at is not None and row.verify_lease_until is None
    with pytest.raises(ValueError, match="outcome"):
        reverify.finish(make, first, "a", state="pending", report={})


@pytest.mark.postgres
def test_only_one_worker_wins_a_run_on_postgres(tmp_path: Path) -> None:
    """``SELECT ... FOR UPDATE SKIP LOCKED`` then the conditional update, on a real PostgreSQL."""
    import importlib.util
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from pg_cluster import pg_bin, postgres_cluster

    if pg_bin() is None or importlib.util.find_spec("psycopg") is None:
        pytest.skip("needs PostgreSQL (apt-get install postgresql) and psycopg (pip install 'verihub[hub]')")
    from hub.server.core.db import migrate

    with postgres_cluster() as url:
        engine = make_engine(url)
        migrate(engine)
        make = sessions(engine)
        with make() as s, s.begin():
            owner = Owner(name="o", kind="user", is_admin=False)
            env = Environment(owner=owner, env_id="e", distribution="e", project="e")
            version = Version(environment=env, version="0.1", manifest_sha256="m", content_hash="c")
            s.add(version)
            s.flush()
            vid = version.id
        ids = [add_run(make, LocalStorage(tmp_path / "blobs"), vid, None) for _ in range(6)]
        got: list[int] = []
        lock, barrier = threading.Lock(), threading.Barrier(3)

        def worker(name: str) -> None:
            barrier.wait()
            while (c := reverify.claim(make, name, 60.0)) is not None:
                with lock:
                    got.append(c.run_id)

        threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        engine.dispose()
    assert sorted(got) == ids  # every run claimed exactly once


def test_an_expired_lease_is_taken_again_and_attempts_are_capped(queue: Any) -> None:
    _config, make, storage, vid = queue
    rid = add_run(make, storage, vid, None)
    held = reverify.claim(make, "a", 1.0)
    assert held is not None and reverify.heartbeat(make, held, "a", 600.0)
    lease = run_row(make, rid).verify_lease_until
    assert lease is not None and lease > utcnow() + dt.timedelta(seconds=500)  # pushed forward
    assert reverify.claim(make, "b", 60.0) is None  # the lease holds
    expire(make)  # a's machine died: its lease ran out
    again = reverify.claim(make, "b", 60.0)
    assert again is not None and again.run_id == rid and again.attempt == 2
    assert not reverify.heartbeat(make, held, "a", 60.0)  # a lost it
    assert not reverify.finish(make, held, "a", state="verified", report={})
    expire(make)
    third = reverify.claim(make, "c", 60.0)
    assert third is not None and third.attempt == 3
    expire(make)
    assert reverify.claim(make, "d", 60.0) is None  # a fourth claim ends it instead
    row = run_row(make, rid)
    assert row.verify_state == "error" and row.verify_attempts == 4
    assert "stopped unfinished 3 times" in json.loads(row.verify_report)["error"]


def test_missing_blobs_end_in_error(queue: Any, tmp_path: Path) -> None:
    config, make, storage, vid = queue
    no_archive = add_run(make, storage, vid, None)
    run = tmp_path / "run"
    run.mkdir()
    for name in RUN_FILES:  # any stored archive will do: the wheel is missing before it is read
        (run / name).write_text("{}", encoding="utf-8")
    sha = storage.put_file(tar_run(run, tmp_path / "run.tar.gz"))
    no_wheel = add_run(make, storage, vid, None)
    with make() as s, s.begin():
        s.execute(update(Run).where(Run.id == no_wheel).values(archive_sha256=sha))
    assert work(config, once=True) == 0  # nothing regraded: both recorded as errors
    first, second = run_row(make, no_archive), run_row(make, no_wheel)
    assert first.verify_state == second.verify_state == "error"
    assert f"archive blob {'ab' * 32} is missing" in json.loads(first.verify_report)["error"]
    assert f"wheel blob {'ef' * 32} is missing" in json.loads(second.verify_report)["error"]


def synthetic_run(root: Path, n: int) -> Path:
    """A run directory of ``n`` graded rollouts plus one model error (not checked), made up here."""
    from hub.env.types import Message, RolloutError, Sampling, Timing
    from hub.run.rundir import RunConfig

    root.mkdir()
    config = RunConfig(
        env_id="e",
        env_version="0.1",
        env_hash="sha256:" + "0" * 64,
        env_args={"level": 2, "path": "/data/here"},
        location_args=["path"],
        model="m",
        base_url=None,
        sampling=Sampling(),
        seed=3,
        split="test",
        num_tasks=n,
        rollouts_per_task=1,
        max_turns=1,
        verihub_version="0",
    )
    (root / "config.json").write_text(config.model_dump_json(), encoding="utf-8")
    rows = [
        Rollout(
            task_id=f"t{i}",
            rollout_index=0,
            messages=[Message(role="assistant", content=str(i))],
            reward=1.0,
            passed=True,
            grade=Grade(score=1.0, passed=True, status="correct"),
            timing=Timing(started_at=1.0),
        )
        for i in range(n)
    ]
    failed = Rollout(
        task_id="t0", rollout_index=1, messages=[], timing=Timing(started_at=1.0),
        error=RolloutError(kind="model", message="down"),
    )  # fmt: skip
    text = "".join(r.model_dump_json() + "\n" for r in [*rows, failed])
    (root / "rollouts.jsonl").write_text(text, encoding="utf-8")
    (root / "summary.json").write_text("{}", encoding="utf-8")
    return root


def test_the_child_regrades_only_the_sample_and_a_hang_is_a_differing_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hub.review.check.regrade import RegradeResult
    from hub.server.results import reverify_child

    archive = tar_run(synthetic_run(tmp_path / "run", 30), tmp_path / "run.tar.gz")
    wheel = tmp_path / "blob"
    wheel.write_bytes(b"not read here")
    seen: dict[str, Any] = {}

    def fake_regrade(source: Path, rollouts: Path, **kw: Any) -> RegradeResult:
        records = [Rollout.model_validate_json(ln) for ln in rollouts.read_text().splitlines()]
        seen.update(kw, source=source.name, keys=[f"{r.task_id}#{r.rollout_index}" for r in records])
        hung = seen["keys"][3]
        return RegradeResult(graded=3, error=f"regrading did not finish: grading {hung} hung", hung=hung)

    monkeypatch.setattr(reverify_child, "regrade_sandboxed", fake_regrade)
    state, report = reverify_child.reverify_run(
        archive, wheel, share=0.1, wheel_name="e-0.1-py3-none-any.whl"
    )
    assert seen["source"] == "e-0.1-py3-none-any.whl"  # staged under its real name
    assert seen["env_id"] == "e" and seen["split"] == "test" and seen["seed"] == 3 and seen["num_tasks"] == 30
    assert seen["options"].env_args == {"level": 2}  # a location argument names a path of the pusher's
    assert seen["keys"] == report["sampled_keys"] and len(seen["keys"]) == report["sampled"] == 20
    assert report["rollouts"] == 31 and report["total"] == 30  # the model error has no verdict to check
    assert state == "unverified" and report["n_differ"] == 1
    assert report["differ"] == [f"{seen['keys'][3]}: recorded passed=True reward=1.0, the grader now hangs"]

    def broken(source: Path, rollouts: Path, **kw: Any) -> RegradeResult:
        return RegradeResult(error="the environment does not load: ImportError")

    monkeypatch.setattr(reverify_child, "regrade_sandboxed", broken)
    state, report = reverify_child.reverify_run(archive, wheel, share=1.0)
    assert state == "error" and report["error"] == "the environment does not load: ImportError"
    assert report["sampled"] == 30


def test_the_child_writes_the_runs_environment_tasks_only_and_caps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every task id of the run is asked for (not only the sampled rollouts'); what the package
    answers is untrusted: other ids and repeats are dropped, and past the cap nothing is written."""
    from hub.review.check.regrade import RegradeResult
    from hub.server.results import reverify_child

    archive = tar_run(synthetic_run(tmp_path / "run", 30), tmp_path / "run.tar.gz")
    wheel = tmp_path / "blob"
    wheel.write_bytes(b"not read here")
    asked: list[frozenset[str]] = []

    def listing(source: Path, rollouts: Path, **kw: Any) -> RegradeResult:
        asked.append(kw["keep_tasks"])
        tasks = [Task(id=f"t{i}", prompt=f"q{i}", answer=str(i), metadata={"i": i}) for i in range(30)]
        tasks += [Task(id="t3", prompt="again", answer="forged"), Task(id="other", prompt="x", answer="y")]
        return RegradeResult(graded=20, tasks=tasks)

    monkeypatch.setattr(reverify_child, "regrade_sandboxed", listing)
    out = tmp_path / "tasks.jsonl"
    state, report = reverify_child.reverify_run(archive, wheel, share=0.1, tasks_out=out)
    assert state == "verified" and report["sampled"] == 20
    assert asked == [frozenset(f"t{i}" for i in range(30))]  # the whole run, not the sample
    written = [Task.model_validate_json(line) for line in out.read_bytes().splitlines()]
    assert [t.id for t in written] == [f"t{i}" for i in range(30)] and report["n_tasks"] == 30
    assert written[3].answer == "3" and written[3].metadata == {"i": 3}  # the first t3, not the repeat
    assert "tasks_skipped" not in report

    out.unlink()
    monkeypatch.setattr(reverify_child, "MAX_TASKS_BYTES", 200)
    state, report = reverify_child.reverify_run(archive, wheel, share=0.1, tasks_out=out)
    assert state == "verified" and not out.exists() and report["n_tasks"] == 0
    assert "exceed" in report["tasks_skipped"] and "rollouts' prompts" in report["tasks_skipped"]

    asked.clear()  # without tasks_out nothing is asked for or written
    state, report = reverify_child.reverify_run(archive, wheel, share=0.1)
    assert asked == [frozenset()] and "n_tasks" not in report and not out.exists()


@pytest.mark.slow
def test_the_worker_renews_the_lease_and_kills_a_child_past_its_time(
    queue: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, make, storage, vid = queue
    config = HubConfig(data=config.data, lease_s=0.3)
    archive = storage.put_file(tar_run(synthetic_run(tmp_path / "run", 5), tmp_path / "run.tar.gz"))
    wheel = storage.put_bytes(b"not a wheel")
    with make() as s, s.begin():
        s.execute(update(EnvFile).values(sha256=wheel))
    held, timed = add_run(make, storage, vid, None), add_run(make, storage, vid, None)
    with make() as s, s.begin():
        s.execute(update(Run).values(archive_sha256=archive))
    # each child outlives its lease: only the heartbeat keeps the run this worker's
    assert work(config, once=True) == 2
    state, report = report_of(make, held)
    assert state == "error" and report["attempt"] == 1 and report["duration_s"] > config.lease_s
    assert report["sampled"] == 5 and report["error"]  # a blob that is no wheel cannot be graded
    monkeypatch.setattr(reverify, "TIMEOUT_S", 0.0)
    with make() as s, s.begin():
        s.execute(update(Run).where(Run.id == timed).values(verify_state="pending", verify_attempts=0))
    assert work(config, once=True) == 1
    state, report = report_of(make, timed)
    assert state == "error" and report["error"] == "the re-verification took longer than 0s"


# -- real runs of the published arith wheel, regraded in the sandbox -------------------------------
@pytest.fixture
def published(hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], tmp_path: Path) -> Any:
    """The arith bundle pushed to ``hub``; returns (make, storage, version id, the run's rollouts)."""
    r = hub.push(packed(arith_bundle.bundle))
    assert r.status_code == 201, r.text
    make = hub.sessions()
    with make() as s:
        vid = s.scalars(select(Version.id)).one()
    rollouts = list(RunDir(arith_bundle.bundle / "eval").iter_rollouts())
    return make, LocalStorage(hub.config.data), vid, rollouts


def copy_run(arith_bundle: Any, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in RUN_FILES:
        shutil.copyfile(arith_bundle.bundle / "eval" / name, dest / name)
    return dest


def skip_review(make: sessionmaker[Session]) -> None:
    """Mark the pushed version reviewed (the review is not what these tests are about)."""
    with make() as s, s.begin():
        s.execute(update(Job).values(state="passed"))
        s.execute(update(Version).values(state="passed"))


def report_of(make: sessionmaker[Session], run_id: int) -> tuple[str, dict[str, Any]]:
    row = run_row(make, run_id)
    return row.verify_state, json.loads(row.verify_report)


def assert_real_tasks_stored(
    hub: Any,
    arith_bundle: Any,
    make: sessionmaker[Session],
    rid: int,
    report: dict[str, Any],
    rollouts: list[Rollout],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run's environment tasks, listed in the sandbox, are stored with their real answers and
    metadata (those of the arith package loaded here), and ``hub gc`` keeps their blob."""
    from hub.server.admin import collect_garbage

    monkeypatch.syspath_prepend(str(arith_bundle.src))
    from verihub_arith import load_environment

    config = RunDir(arith_bundle.bundle / "eval").load_config()
    env = load_environment(**config.env_args)
    ids = {r.task_id for r in rollouts}
    assert config.num_tasks is not None and not config.shuffle  # arith's task stream is endless
    listed = itertools.islice(env.tasks(config.split, seed=config.seed), config.num_tasks)
    expected = [t for t in listed if t.id in ids]
    sha = report["tasks_sha256"]
    blob = LocalStorage(hub.config.data).path(sha).read_bytes()
    stored = [Task.model_validate_json(line) for line in blob.splitlines()]
    assert report["n_tasks"] == len(stored) == len(ids) and "tasks_skipped" not in report
    assert stored == expected  # the real tasks: answers and metadata, in the environment's order
    assert all(t.answer and t.metadata.get("expression") for t in stored)
    stray = LocalStorage(hub.config.data).put_bytes(b"referenced by nothing")
    removed = collect_garbage(hub.config)
    assert stray in removed and sha not in removed and run_row(make, rid).archive_sha256 not in removed
    assert LocalStorage(hub.config.data).exists(sha)


@NEEDS_SANDBOX
@pytest.mark.sandbox
def test_reviews_first_then_an_honest_run_is_verified(
    hub: Any, published: Any, arith_bundle: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, storage, vid, rollouts = published
    rid = add_run(make, storage, vid, copy_run(arith_bundle, tmp_path / "honest"))
    assert hub.review() == 2  # the queued review, then the run
    with make() as s:
        version = s.get(Version, vid)
        assert version is not None and version.state == "passed" and version.reviewed_at is not None
    state, report = report_of(make, rid)
    assert state == "verified", report
    assert run_row(make, rid).verified_at >= version.reviewed_at
    total = len(rollouts)
    assert total <= 20 and report["total"] == report["rollouts"] == total
    assert report["sampled"] == report["graded"] == total  # a small run is checked in full
    assert sorted(report["sampled_keys"]) == sorted(f"{r.task_id}#{r.rollout_index}" for r in rollouts)
    assert report["n_differ"] == 0 and report["differ"] == [] and report["error"] is None
    assert (
        report["share"] == hub.config.reverify_share and report["duration_s"] > 0 and report["attempt"] == 1
    )
    assert_real_tasks_stored(hub, arith_bundle, make, rid, report, rollouts, monkeypatch)


@NEEDS_SANDBOX
@pytest.mark.sandbox
def test_a_large_honest_run_is_sampled(hub: Any, published: Any, arith_bundle: Any, tmp_path: Path) -> None:
    make, storage, vid, rollouts = published
    skip_review(make)
    run = copy_run(arith_bundle, tmp_path / "large")
    per_task = RunDir(run).load_config().rollouts_per_task
    wide = widen(rollouts, 5, per_task)
    rewrite(run, wide, rollouts_per_task=5 * per_task)
    rid = add_run(make, storage, vid, run)
    assert work(hub.config, once=True) == 1
    state, report = report_of(make, rid)
    assert state == "verified", report
    assert report["total"] == len(wide) > 20
    assert report["sampled"] == sample_size(len(wide), 0.1) == min(len(wide), max(20, -(-len(wide) // 10)))
    assert report["graded"] == report["sampled"] == len(set(report["sampled_keys"]))
    assert set(report["sampled_keys"]) <= {f"{r.task_id}#{r.rollout_index}" for r in wide}


@NEEDS_SANDBOX
@pytest.mark.sandbox
@pytest.mark.parametrize("large", [False, True], ids=["small-run", "large-run-share-1"])
def test_a_forged_run_is_unverified(
    hub: Any, published: Any, arith_bundle: Any, tmp_path: Path, large: bool
) -> None:
    make, storage, vid, rollouts = published
    skip_review(make)
    run = copy_run(arith_bundle, tmp_path / "forged")
    per_task = RunDir(run).load_config().rollouts_per_task
    records = widen(rollouts, 3, per_task) if large else list(rollouts)
    target = next((i for i, r in enumerate(records) if r.error is None and not r.passed), 0)
    forged_key = f"{records[target].task_id}#{records[target].rollout_index}"
    records[target] = flip(records[target])
    rewrite(run, records, rollouts_per_task=3 * per_task if large else None)
    rid = add_run(make, storage, vid, run)
    config = HubConfig(data=hub.config.data, reverify_share=1.0 if large else 0.1)
    assert work(config, once=True) == 1
    state, report = report_of(make, rid)
    assert state == "unverified", report
    assert report["sampled"] == report["total"] == len(records) and forged_key in report["sampled_keys"]
    assert report["n_differ"] == 1 and report["differ"][0].startswith(f"{forged_key}: recorded passed=")
    assert "regraded passed=" in report["differ"][0]


@NEEDS_SANDBOX
@pytest.mark.sandbox
def test_no_sandbox_is_an_error_not_verified(
    hub: Any, published: Any, arith_bundle: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, storage, vid, _rollouts = published
    skip_review(make)
    rid = add_run(make, storage, vid, copy_run(arith_bundle, tmp_path / "run"))
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # the re-verification child finds no bubblewrap
    assert work(hub.config, once=True) == 1
    state, report = report_of(make, rid)
    assert state == "error", report
    assert "bubblewrap is not installed" in report["error"] and report["graded"] == 0
