"""hub.run.sharded: evaluation shards merged into one run directory; grading on Ray workers.

The merge logic is tested with the in-process ``local`` backend; the Ray tests start a local
Ray instance with two workers and are skipped when Ray is not installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.env.types import Sampling
from hub.run.evaluate import EvalOptions, evaluate
from hub.run.fake_server import FakeChatServer
from hub.run.ray_grading import RayGradedEnv, regrade_on_ray
from hub.run.rundir import RunDir
from hub.run.sharded import evaluate_sharded

HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAS_RAY, reason="ray is not installed (`pip install ray`)")


def digits_responder(request: dict[str, Any]) -> str:
    """Deterministic per prompt: some arith tasks pass, most fail."""
    text = request["messages"][-1]["content"]
    return f"Answer: {sum(c.isdigit() for c in text) % 3}"


def _keys(run: Path) -> list[tuple[str, int]]:
    return [(r.task_id, r.rollout_index) for r in RunDir(run).iter_rollouts()]


def _verdicts(run: Path) -> list[tuple[str, int, float | None, bool, str | None]]:
    """Each rollout's grade, by (task, rollout_index): what must not depend on where grading ran."""
    rows = [
        (
            r.task_id,
            r.rollout_index,
            r.reward,
            r.passed,
            None if r.grade is None else r.grade.model_dump_json(),
        )
        for r in RunDir(run).iter_rollouts()
    ]
    return sorted(rows, key=lambda row: (row[0], row[1]))


@contextlib.contextmanager
def _serving() -> Iterator[str]:
    """The fake model server on a loop in a background thread (for CLI calls, which run their own
    event loop); yields its base URL."""
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    server = FakeChatServer(responder=digits_responder)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=30)
    try:
        yield server.base_url
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def _cli(argv: list[str]) -> int:
    from hub.cli import main

    with pytest.raises(SystemExit) as done:
        main(argv)
    return int(done.value.code or 0)


@pytest.fixture
def ray_spy(monkeypatch: pytest.MonkeyPatch) -> list[RayGradedEnv]:
    """Every RayGradedEnv the runner option makes (it is looked up in hub.run.ray_grading)."""
    import hub.run.ray_grading

    made: list[RayGradedEnv] = []

    class Spy(RayGradedEnv):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(hub.run.ray_grading, "RayGradedEnv", Spy)
    return made


def _common(server: FakeChatServer) -> dict[str, Any]:
    return dict(
        model="fake",
        base_url=server.base_url,
        num_tasks=6,
        rollouts=2,
        sampling=Sampling(max_tokens=8),
        options=EvalOptions(concurrency=4, max_retries=0),
    )


async def test_local_shards_merge_like_a_single_run(tmp_path: Path) -> None:
    async with FakeChatServer(responder=digits_responder) as server:
        single = await evaluate("arith", out=tmp_path / "single", **_common(server))
        merged = await evaluate_sharded(
            "arith",
            out=tmp_path / "sharded",
            shards=4,
            backend="local",
            group_advantages=False,
            **_common(server),
        )
        requests = server.requests
        again = await evaluate_sharded(
            "arith", out=tmp_path / "sharded", shards=4, backend="local", **_common(server)
        )
        assert server.requests == requests  # the same command again resumes: nothing left to run
    keys = _keys(tmp_path / "sharded")
    assert keys == _keys(tmp_path / "single") and len(set(keys)) == 12
    for field in ("n_tasks", "n_rollouts", "mean_reward", "pass_at_k", "per_task"):
        assert getattr(merged, field) == getattr(single, field) == getattr(again, field)
    on_disk = json.loads((tmp_path / "sharded" / "summary.json").read_text())
    assert on_disk["n_rollouts"] == 12 and on_disk["n_tasks"] == 6
    assert RunDir(tmp_path / "sharded").load_config().num_tasks == 6
    assert len(list((tmp_path / "sharded" / "shards").iterdir())) == 4


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    if not HAS_RAY:
        pytest.skip("ray is not installed (`pip install ray`)")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@needs_ray
async def test_ray_shards_merge_into_one_run(tmp_path: Path, ray_local: Any) -> None:
    async with FakeChatServer(responder=digits_responder) as server:
        single = await evaluate("arith", out=tmp_path / "single", **_common(server))
        # shards on Ray grading on Ray too: two shards and their grading tasks on two CPUs
        # (the shards reserve no CPU, else they would hold both and wait forever)
        common = {**_common(server), "options": EvalOptions(concurrency=4, max_retries=0, grade_on="ray")}
        merged = await evaluate_sharded(
            "arith", out=tmp_path / "ray", shards=2, backend="ray", group_advantages=True, **common
        )
    assert _keys(tmp_path / "ray") == _keys(tmp_path / "single")
    assert _verdicts(tmp_path / "ray") == _verdicts(tmp_path / "single")
    assert merged.n_rollouts == 12 and merged.n_tasks == 6
    assert merged.pass_at_k == single.pass_at_k and merged.mean_reward == single.mean_reward
    assert merged.zero_variance_fraction is not None
    assert all("advantage" in r.extra for r in RunDir(tmp_path / "ray").iter_rollouts())


@needs_ray
async def test_ray_grading_pool_in_runner_and_regrade(tmp_path: Path, ray_local: Any) -> None:
    from hub.run.client import ClientOptions, OpenAIClient
    from hub.run.rundir import RunConfig
    from hub.run.runner import Runner

    env = RayGradedEnv("arith")
    tasks = list(itertools.islice(env.tasks("test"), 4))
    config = RunConfig(
        env_id="arith",
        env_version=env.version,
        env_hash="sha256:test",
        model="fake",
        base_url=None,
        sampling=Sampling(max_tokens=8),
        seed=0,
        split="test",
        num_tasks=4,
        rollouts_per_task=1,
        max_turns=1,
        verihub_version="0.1.0",
    )
    rundir = RunDir(tmp_path / "run")
    rundir.create(config)
    async with FakeChatServer(responder=digits_responder) as server:
        async with OpenAIClient(
            ClientOptions(base_url=server.base_url, model="fake", max_retries=0)
        ) as client:
            summary = await Runner(env=env, client=client, config=config, rundir=rundir, concurrency=4).run(
                tasks
            )
    assert summary.n_rollouts == 4 and summary.n_errors == 0
    before = [(r.reward, r.passed) for r in rundir.iter_rollouts()]
    stale = [  # a recorded grading time far from what a regrade takes: it must be replaced, not kept
        r.model_copy(update={"timing": r.timing.model_copy(update={"grade_s": 1000.0, "total_s": 1000.0})})
        for r in rundir.iter_rollouts()
    ]
    rundir.rollouts_path.write_text("".join(r.model_dump_json() + "\n" for r in stale))
    regraded, changed = await regrade_on_ray(tmp_path / "run")
    assert changed == 0 and regraded.n_rollouts == 4
    after = list(rundir.iter_rollouts())
    assert [(r.reward, r.passed) for r in after] == before
    assert all(0 <= r.timing.grade_s < 60 and r.timing.total_s < 1000 for r in after)


def test_cli_eval_sharded_local_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _serving() as url:
        argv = ["eval-sharded", "arith", "--model", "fake", "--base-url", url]
        argv += ["--out", str(tmp_path / "run"), "--shards", "3", "--backend", "local", "-n", "5", "-r", "2"]
        assert _cli(argv) == 0
        assert _cli([*argv[:-6], "--backend", "spark"]) == 1
    assert len(_keys(tmp_path / "run")) == 10
    assert "--backend must be ray or local" in capsys.readouterr().err


@needs_ray
def test_cli_eval_grade_on_ray_matches_local_grading(
    tmp_path: Path, ray_local: Any, ray_spy: list[RayGradedEnv], capsys: pytest.CaptureFixture[str]
) -> None:
    with _serving() as url:
        argv = ["eval", "arith", "--model", "fake", "--base-url", url, "-n", "6", "-r", "2"]
        argv += ["--max-tokens", "8", "--concurrency", "4", "--max-retries", "0", "--no-progress"]
        assert _cli([*argv, "--out", str(tmp_path / "local")]) == 0
        assert not ray_spy  # the default grades in this process
        assert _cli([*argv, "--out", str(tmp_path / "ray"), "--grade-on", "ray"]) == 0
        [env] = ray_spy
        # every rollout was graded by a Ray task, in worker processes other than this one
        assert env.remote_grades == 12
        assert env.worker_pids and os.getpid() not in env.worker_pids
        # the grading backend is not part of the run's identity: resume a local run on Ray
        local_lines = (tmp_path / "local" / "rollouts.jsonl").read_text().splitlines(keepends=True)
        (tmp_path / "resumed").mkdir()
        (tmp_path / "resumed" / "config.json").write_text((tmp_path / "local" / "config.json").read_text())
        (tmp_path / "resumed" / "rollouts.jsonl").write_text("".join(local_lines[:5]))
        assert (
            _cli(["eval", "--resume", str(tmp_path / "resumed"), "--grade-on", "ray", "--no-progress"]) == 0
        )
        assert ray_spy[1].remote_grades == 7
        # bad options are one-line errors
        assert _cli([*argv, "--out", str(tmp_path / "bad"), "--grade-on", "spark"]) == 1
        assert _cli([*argv, "--out", str(tmp_path / "bad"), "--ray-address", "auto"]) == 1
    err = capsys.readouterr().err
    assert "--grade-on must be local or ray" in err and "--ray-address needs --grade-on ray" in err
    assert ray_local.is_initialized()  # Ray was running before the run: the run leaves it running
    for run in ("local", "ray", "resumed"):
        summary = json.loads((tmp_path / run / "summary.json").read_text())
        assert summary["n_rollouts"] == 12 and summary["n_tasks"] == 6 and summary["n_errors"] == 0
    assert _verdicts(tmp_path / "ray") == _verdicts(tmp_path / "local") == _verdicts(tmp_path / "resumed")
    assert (
        RunDir(tmp_path / "ray").load_config().identity()
        == RunDir(tmp_path / "local").load_config().identity()
    )


@needs_ray
async def test_local_shards_grade_on_ray(tmp_path: Path, ray_local: Any, ray_spy: list[RayGradedEnv]) -> None:
    async with FakeChatServer(responder=digits_responder) as server:
        single = await evaluate("arith", out=tmp_path / "single", **_common(server))
        common = {**_common(server), "options": EvalOptions(concurrency=4, max_retries=0, grade_on="ray")}
        merged = await evaluate_sharded(
            "arith", out=tmp_path / "sharded", shards=2, backend="local", **common
        )
    assert len(ray_spy) == 2 and sum(env.remote_grades for env in ray_spy) == 12
    assert all(env.worker_pids and os.getpid() not in env.worker_pids for env in ray_spy)
    assert _verdicts(tmp_path / "sharded") == _verdicts(tmp_path / "single")
    assert merged.mean_reward == single.mean_reward


@needs_ray
def test_cli_eval_sharded_grade_on_ray(tmp_path: Path, ray_local: Any, ray_spy: list[RayGradedEnv]) -> None:
    with _serving() as url:
        argv = ["eval-sharded", "arith", "--model", "fake", "--base-url", url, "-n", "5", "-r", "2"]
        argv += ["--shards", "2", "--backend", "local", "--max-tokens", "8"]
        assert _cli([*argv, "--out", str(tmp_path / "local")]) == 0
        assert not ray_spy
        assert _cli([*argv, "--out", str(tmp_path / "ray"), "--grade-on", "ray"]) == 0
        assert _cli([*argv, "--out", str(tmp_path / "bad"), "--grade-on", "spark"]) == 1
    assert len(ray_spy) == 2 and sum(env.remote_grades for env in ray_spy) == 10
    assert all(os.getpid() not in env.worker_pids for env in ray_spy)
    assert _verdicts(tmp_path / "ray") == _verdicts(tmp_path / "local")
