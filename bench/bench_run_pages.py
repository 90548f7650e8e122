"""Benchmark of the hub's run pages on a large run: a 100,000-rollout run in a temporary SQLite hub.

    python bench/bench_run_pages.py [--rollouts 100000] [--reps 15]

Builds the hub (``create_app`` on a temporary data folder), one public environment version and
one run whose board entry and summary come from a small real run (``leaderboard.testing``), then
``--rollouts`` rows of ``rollouts`` made by the ingestion's own ``rollout_values`` from synthetic
rollout lines (2,000 tasks; rewards and errors varied; a short transcript each). Then times, with
Starlette's TestClient in this process (no network), ``--reps`` requests of each page after one
warm-up request: page 1, a middle page, filtered pages (status, reward range, task), a sort by
reward, a rollout page and the task page. Prints one JSON document: per page the median and
minimum wall time and the median CPU time of this process (the server runs in it), in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TASKS = 2000


def _line(task: int, index: int, rng: random.Random) -> bytes:
    roll = rng.random()
    error = roll < 0.03
    reward = None if error else rng.choice((0.0, 0.0, 0.5, 1.0, 1.0))
    data: dict[str, Any] = {
        "task_id": f"task-{task:05d}",
        "rollout_index": index,
        "messages": [
            {"role": "user", "content": f"Solve problem {task}: what is {task} * {index + 3}?"},
            {
                "role": "assistant",
                "content": f"Let me think step by step. The answer is {task * (index + 3)}.",
            },
        ],
        "completion": f"The answer is {task * (index + 3)}.",
        "reward": reward,
        "passed": reward == 1.0,
        "grade": None
        if error
        else {
            "score": reward,
            "passed": reward == 1.0,
            "status": "correct" if reward == 1.0 else "partial" if reward else "incorrect",
            "extracted": str(task * (index + 3)),
            "reason": "compared with the reference",
            "checks": [],
        },
        "usage": {"prompt_tokens": 40, "completion_tokens": 20},
        "timing": {"started_at": 1_790_000_000.0, "total_s": 0.5},
        "error": {"kind": "model", "message": "HTTP 503"} if error else None,
        "turns": 1,
    }
    return json.dumps(data).encode()


def build(data: Path, n: int, n_labels: int = 0) -> tuple[Any, str]:
    """The application and the public id of its big run (``n_labels`` rollouts labelled, a tenth of
    them twice so an older label is superseded)."""
    from sqlalchemy import insert

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig
    from hub.server.core.models import PASSED, Environment, Owner, RolloutLabel, Run, RunRollout, Version
    from hub.server.results.rollout_store import refresh_statistics, rollout_values
    from leaderboard import entry_from_run, verify_run
    from leaderboard.testing import fake_env_hash, write_run

    (data / "hub").mkdir(parents=True)
    app = create_app(HubConfig(data=data / "hub"))
    small = verify_run(write_run(data / "small", env_id="big", env_version="1.0.0"))
    entry = entry_from_run(small, owner="alice")
    rpt = n // TASKS
    with app.state.sessions() as session, session.begin():
        owner = Owner(name="alice", kind="user")
        session.add(owner)
        session.flush()
        env = Environment(owner_id=owner.id, env_id="big", distribution="big", project="big")
        session.add(env)
        session.flush()
        version = Version(
            environment_id=env.id,
            version="1.0.0",
            manifest_sha256="0" * 64,
            content_hash=fake_env_hash("big", "1.0.0"),
            state=PASSED,
        )
        session.add(version)
        session.flush()
        run = Run(
            public_id="bigrun0123456789",
            version_id=version.id,
            owner_id=owner.id,
            model="model-big",
            private=False,
            archive_sha256="0" * 64,
            run_sha256="1" * 64,
            entry=entry.model_dump_json(),
            summary=small.summary.model_dump_json(),
            rollouts_stored=True,
        )
        session.add(run)
        session.flush()
        rng = random.Random(0)
        keys = [(t, i) for t in range(TASKS) for i in range(rpt)]
        rng.shuffle(keys)  # recorded in completion order, as a concurrent runner writes them
        batch = []
        for idx, (t, i) in enumerate(keys):
            batch.append(rollout_values(run.id, idx, _line(t, i, rng)))
            if len(batch) == 1000:
                session.execute(insert(RunRollout), batch)
                batch = []
        if batch:
            session.execute(insert(RunRollout), batch)
        values = ("correct", "incorrect", "reward_hack", "unclear")
        labelled = rng.sample(range(n), min(n_labels, n))
        twice = labelled[: len(labelled) // 10]
        rows = [
            {"run_id": run.id, "rollout": idx, "value": rng.choice(values), "note": "", "author_id": owner.id}
            for idx in labelled + twice
        ]
        if rows:
            session.execute(insert(RolloutLabel), rows)
        refresh_statistics(session)  # as the ingestion does after storing a run
    return app, "bigrun0123456789"


def timed(client: Any, url: str, reps: int) -> dict[str, float]:
    r = client.get(url)
    assert r.status_code == 200, (url, r.status_code)
    times, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        r = client.get(url)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        assert r.status_code == 200
    return {
        "median_ms": round(statistics.median(times), 2),
        "min_ms": round(min(times), 2),
        "median_cpu_ms": round(statistics.median(cpu), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--labels", type=int, default=0, help="rollouts labelled (a tenth twice)")
    args = parser.parse_args()
    from starlette.testclient import TestClient

    with tempfile.TemporaryDirectory(prefix="bench-run-pages-") as tmp:
        t0 = time.perf_counter()
        app, run_id = build(Path(tmp), args.rollouts, args.labels)
        built_s = time.perf_counter() - t0
        base = f"/runs/{run_id}"
        middle = args.rollouts // 50 // 2
        pages = {
            "page 1 (50 rollouts)": base,
            f"middle page ({middle})": f"{base}?page={middle}",
            "filtered: status=failed, page 3": f"{base}?status=failed&page=3",
            "filtered: reward 0.25..0.75, middle page": f"{base}?reward_min=0.25&reward_max=0.75&page=150",
            "filtered: one task": f"{base}?task=task-01000",
            "sorted: reward, highest first, page 2": f"{base}?sort=-reward&page=2",
            "status=passed, sorted by task, 100 per page": (
                f"{base}?status=passed&sort=task&per_page=100&page=100"
            ),
            "label=correct (the shown label)": f"{base}?label=correct",
            "label=none, middle page": f"{base}?label=none&page={middle}",
            "label=any, sorted by reward": f"{base}?label=any&sort=-reward",
            "rollout page": f"{base}/rollouts/{args.rollouts // 2}",
            "task page": "/alice/big/tasks/task-01000",
        }
        with TestClient(app) as client:
            results = {name: timed(client, url, args.reps) for name, url in pages.items()}
        out = {
            "rollouts": args.rollouts,
            "reps": args.reps,
            "labels": args.labels,
            "build_s": round(built_s, 1),
            "db_bytes": (Path(tmp) / "hub" / "hub.db").stat().st_size,
            "pages": results,
        }
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
