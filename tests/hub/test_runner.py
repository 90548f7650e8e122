"""The runner: bookkeeping, faults, grader failures, resume."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import Rollout, SingleTurnEnv
from hub.env.errors import RunDirError
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunConfig, RunDir
from hub.run.runner import Runner
from tests.conftest import (
    BlockingGrader,
    FloatGrader,
    HangingGrader,
    RaisingGrader,
    correct_responder,
    make_tasks,
    sync_check_exact,
    sync_check_hangs,
    sync_check_raises,
    sync_check_returns_float,
)


def keys(rd: RunDir) -> Counter[tuple[str, int]]:
    return Counter((r.task_id, r.rollout_index) for r in rd.iter_rollouts())


async def run(
    env: SingleTurnEnv, server: FakeChatServer, config: RunConfig, out: Path, **kw: object
) -> object:
    rd = RunDir(out)
    if not rd.config_path.exists():
        rd.create(config)
    opts = ClientOptions(
        base_url=server.base_url,
        model="fake",
        backoff_base_s=0.01,
        backoff_max_s=0.02,
        timeout_s=float(kw.pop("timeout_s", 5.0)),
        max_retries=int(kw.pop("max_retries", 5)),
    )  # type: ignore[call-overload]
    async with OpenAIClient(opts) as client:
        runner = Runner(env=env, client=client, config=config, rundir=rd, concurrency=4, **kw)  # type: ignore[arg-type]
        return await runner.run(list(env.tasks("test")))


async def test_every_pair_once_and_summary(
    toy_env: SingleTurnEnv,
    fake_server: FakeChatServer,
    config_factory: Callable[..., RunConfig],
    tmp_path: Path,
) -> None:
    summary = await run(toy_env, fake_server, config_factory(rollouts=3), tmp_path)
    rd = RunDir(tmp_path)
    assert keys(rd) == Counter({(f"t{i}", j): 1 for i in range(6) for j in range(3)})
    saved = json.loads(rd.summary_path.read_text())
    assert saved["n_rollouts"] == 18 and saved["n_errors"] == 0
    assert saved["mean_reward"] == pytest.approx(0.5)  # even tasks right, odd wrong
    assert {t["task_id"]: t["pass_rate"] for t in saved["per_task"]} == {
        f"t{i}": float(i % 2 == 0) for i in range(6)
    }
    assert (
        saved["pass_at_k"]["1"] == pytest.approx(0.5)
        and "2" in saved["pass_at_k"]
        and "3" in saved["pass_at_k"]
    )
    line = json.loads(rd.rollouts_path.read_text().splitlines()[0])
    for field in (
        "task_id",
        "rollout_index",
        "messages",
        "reward",
        "passed",
        "grade",
        "usage",
        "timing",
        "error",
    ):
        assert field in line
    # the answer is stored once (in messages); reading the record gives it back as completion
    assert "completion" not in line
    raw = rd.rollouts_path.read_text().splitlines()[0]
    answer = line["messages"][-1]["content"]
    assert raw.count(json.dumps(answer)) == 1
    assert next(rd.iter_rollouts()).completion == answer
    assert summary is not None


@pytest.mark.slow
async def test_fault_injection_loses_nothing(
    toy_env: SingleTurnEnv, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    schedule = ["429", "ok", "500", "malformed", "ok", "drop", "slow", "ok"]
    async with FakeChatServer(responder=correct_responder, schedule=schedule, slow_s=2.0) as srv:
        await run(toy_env, srv, config_factory(rollouts=4), tmp_path, timeout_s=0.5, max_retries=1)
    rd = RunDir(tmp_path)
    k = keys(rd)
    assert set(k) == {(f"t{i}", j) for i in range(6) for j in range(4)} and set(k.values()) == {1}
    rollouts = list(rd.iter_rollouts())
    errors = [r for r in rollouts if r.error is not None]
    graded = [r for r in rollouts if r.error is None]
    assert all(r.error is not None and r.error.kind == "model" and r.reward is None for r in errors)
    assert all(r.grade is not None and r.reward is not None for r in graded)
    summary = json.loads(rd.summary_path.read_text())
    assert summary["n_errors"] == len(errors)
    assert summary["errors_by_kind"].get("model", 0) == len(errors)
    # errors never count as wrong answers: the mean is over graded rollouts only
    if graded:
        assert summary["mean_reward"] == pytest.approx(sum(r.reward or 0 for r in graded) / len(graded))


async def test_a_grader_timeout_is_the_responses_failure_and_counts_as_zero(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A grade that outlives its limit is charged to the response (timeout bait must not leave
    the mean): incorrect, reward 0, no rollout error."""
    env = SingleTurnEnv(id="toy", tasks=make_tasks(3), grader=HangingGrader())
    await run(env, fake_server, config_factory(num_tasks=3, rollouts=1), tmp_path, grade_timeout_s=0.2)
    rollouts = list(RunDir(tmp_path).iter_rollouts())
    assert len(rollouts) == 3
    for r in rollouts:
        assert r.error is None and r.reward == 0.0 and not r.passed
        assert r.grade is not None and r.grade.status == "incorrect" and r.grade.reason.startswith("timeout")
    assert json.loads(RunDir(tmp_path).summary_path.read_text())["mean_reward"] == 0.0


async def test_a_grader_that_raises_is_a_counted_zero_and_counted_apart(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A grader bug met on a response must not pay it: incorrect (grader_failed), reward 0,
    counted in the mean and in the summary's grader_failures, never a rollout error."""
    env = SingleTurnEnv(id="toy", tasks=make_tasks(3), grader=RaisingGrader())
    summary = await run(
        env, fake_server, config_factory(num_tasks=3, rollouts=1), tmp_path, grade_timeout_s=5
    )
    rollouts = list(RunDir(tmp_path).iter_rollouts())
    assert len(rollouts) == 3
    for r in rollouts:
        assert r.error is None and r.reward == 0.0 and not r.passed
        assert r.grade is not None and r.grade.grader_failed and "RuntimeError: grader bug" in r.grade.reason
    written = json.loads(RunDir(tmp_path).summary_path.read_text())
    assert written["grader_failures"] == 3 and written["n_errors"] == 0 and written["mean_reward"] == 0.0
    assert summary.grader_failures == 3  # type: ignore[attr-defined]


class UnreachableGrader:
    async def __call__(self, response: str, *, reference: object) -> Grade:
        raise ConnectionError("judge endpoint refused the connection")


async def test_an_infrastructure_failure_is_a_grader_error(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    env = SingleTurnEnv(id="toy", tasks=make_tasks(3), grader=UnreachableGrader())
    await run(env, fake_server, config_factory(num_tasks=3, rollouts=1), tmp_path, grade_timeout_s=5)
    for r in RunDir(tmp_path).iter_rollouts():
        assert r.error is not None and r.error.kind == "grader"
        assert r.grade is not None and r.grade.status == "error" and r.reward is None


async def test_resume_runs_only_missing(
    toy_env: SingleTurnEnv,
    fake_server: FakeChatServer,
    config_factory: Callable[..., RunConfig],
    tmp_path: Path,
) -> None:
    cfg = config_factory(rollouts=2)
    await run(toy_env, fake_server, cfg, tmp_path)
    rd = RunDir(tmp_path)
    lines = rd.rollouts_path.read_bytes().splitlines(keepends=True)
    # keep 5 lines and a torn sixth, as a crash in mid-write would leave
    rd.rollouts_path.write_bytes(b"".join(lines[:5]) + lines[5][:17])
    before = fake_server.requests
    await run(toy_env, fake_server, cfg, tmp_path)
    assert fake_server.requests - before == 12 - 5
    assert set(keys(rd).values()) == {1} and len(keys(rd)) == 12


async def test_resume_refuses_other_config(
    toy_env: SingleTurnEnv,
    fake_server: FakeChatServer,
    config_factory: Callable[..., RunConfig],
    tmp_path: Path,
) -> None:
    await run(toy_env, fake_server, config_factory(rollouts=2), tmp_path)
    with pytest.raises(RunDirError, match="differs in rollouts_per_task"):
        RunDir(tmp_path).check_resumable(config_factory(rollouts=3))
    with pytest.raises(RunDirError, match="already holds a run"):
        RunDir(tmp_path).create(config_factory())


async def test_multi_turn_truncation(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    from hub import Message, MultiTurnEnv, State, Step

    class Nag(MultiTurnEnv):
        async def step(self, state: State, action: Message) -> Step:
            return Step(messages=(Message(role="user", content="What is 0 + 1? Again."),))

    env = Nag(id="nag", tasks=make_tasks(2), grader=ExactGrader(), max_turns=3)
    await run(env, fake_server, config_factory(num_tasks=2, rollouts=1, max_turns=3), tmp_path)
    for r in RunDir(tmp_path).iter_rollouts():
        assert r.turns == 3 and r.truncated
        assert [m.role for m in r.messages] == [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]


async def test_refused_requests_stop_the_run(
    toy_env: SingleTurnEnv, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A 404 for every request (wrong path or model) stops the run with that error."""
    from aiohttp import web

    from hub.env.errors import ModelConfigError

    async def not_found(request: web.Request) -> web.Response:
        return web.Response(status=404, text="no such model")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", not_found)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        rd = RunDir(tmp_path)
        cfg = config_factory()
        rd.create(cfg)
        opts = ClientOptions(base_url=f"http://127.0.0.1:{port}/v1", model="nope")
        async with OpenAIClient(opts) as client:
            with pytest.raises(ModelConfigError, match="404.*--base-url"):
                await Runner(env=toy_env, client=client, config=cfg, rundir=rd, concurrency=4).run(
                    list(toy_env.tasks("test"))
                )
        assert list(rd.iter_rollouts()) == []
    finally:
        await runner.cleanup()


async def test_evaluate_then_regrade_restores_tampered_rewards(tmp_path: Path) -> None:
    from hub.env.types import Sampling
    from hub.run.evaluate import evaluate, regrade

    out = tmp_path / "run"

    def solve_odd_sums(req: dict[str, Any]) -> str:
        """Right on the additions whose first operand is odd, wrong on everything else."""
        m = re.search(r"Compute (\d+) \+ (\d+)\.", req["messages"][-1]["content"])
        if m is None or int(m.group(1)) % 2 == 0:
            return "Answer: -1"
        return f"Answer: {int(m.group(1)) + int(m.group(2))}"

    async with FakeChatServer(responder=solve_odd_sums) as srv:  # right for some arith tasks
        summary = await evaluate(
            "arith",
            model="fake",
            base_url=srv.base_url,
            out=out,
            num_tasks=30,
            rollouts=2,
            sampling=Sampling(max_tokens=8),
        )
    assert summary.n_rollouts == 60 and summary.n_errors == 0 and 0 < (summary.mean_reward or 0) < 1
    rd = RunDir(out)
    lines = rd.rollouts_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["reward"], first["passed"] = 1.0 - (first["reward"] or 0.0), not first["passed"]
    rd.rollouts_path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    new_summary, changed = await regrade(out)
    assert changed == 1
    assert new_summary.mean_reward == summary.mean_reward
    assert new_summary.per_task == summary.per_task


def test_advantages() -> None:
    from hub.env.types import RolloutError, Timing
    from hub.run.runner import with_advantages

    def r(i: int, reward: float | None) -> Rollout:
        err = RolloutError(kind="model", message="x") if reward is None else None
        return Rollout(
            task_id="t", rollout_index=i, messages=[], reward=reward, timing=Timing(started_at=0), error=err
        )

    out = with_advantages([r(0, 1.0), r(1, 0.0), r(2, 0.0), r(3, None)])
    advs = [x.extra["advantage"] for x in out]
    assert advs[3] is None
    assert sum(a for a in advs if a is not None) == pytest.approx(0.0)
    assert advs[0] == pytest.approx((1 - 1 / 3) / (2 / 9) ** 0.5)
    assert [x.extra["advantage"] for x in with_advantages([r(0, 1.0), r(1, 1.0)])] == [0.0, 0.0]


async def test_group_mode_writes_whole_groups(
    toy_env: SingleTurnEnv,
    fake_server: FakeChatServer,
    config_factory: Callable[..., RunConfig],
    tmp_path: Path,
) -> None:
    cfg = config_factory(rollouts=4, group_advantages=True)
    summary = await run(toy_env, fake_server, cfg, tmp_path)
    rd = RunDir(tmp_path)
    rollouts = list(rd.iter_rollouts())
    assert len(rollouts) == 24 and all("advantage" in r.extra for r in rollouts)
    # the toy server answers each task always right or always wrong: every group has zero variance
    assert summary.zero_variance_fraction == 1.0  # type: ignore[attr-defined]
    # a crash that left half a group: the partial group is dropped and rerun whole
    lines = rd.rollouts_path.read_bytes().splitlines(keepends=True)
    rd.rollouts_path.write_bytes(b"".join(lines[:6]))
    before = fake_server.requests
    await run(toy_env, fake_server, cfg, tmp_path)
    assert fake_server.requests - before == 24 - 4
    counts = Counter((r.task_id, r.rollout_index) for r in rd.iter_rollouts())
    assert len(counts) == 24 and set(counts.values()) == {1}


async def test_blocking_grader_is_recorded_as_timeout(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """asyncio cannot interrupt a grader that blocks the loop: the limit holds on the record
    (as the response's failure: a counted 0 whose reason says timeout)."""
    env = SingleTurnEnv(id="toy", tasks=make_tasks(2), grader=BlockingGrader(0.4))
    await run(env, fake_server, config_factory(num_tasks=2, rollouts=1), tmp_path, grade_timeout_s=0.1)
    rd = RunDir(tmp_path)
    rollouts = list(rd.iter_rollouts())
    assert len(rollouts) == 2 and rd.summary_path.exists()
    for r in rollouts:
        assert r.grade is not None and r.grade.status == "incorrect" and r.reward == 0.0
        assert r.error is None and r.grade.reason.startswith("timeout:")
        assert "blocked the event loop for 0.4" in r.grade.reason and "graders.pool" in r.grade.reason
    assert json.loads(rd.summary_path.read_text())["errors_by_kind"] == {}


async def test_brief_blocking_within_the_limit_is_not_a_timeout(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    env = SingleTurnEnv(id="toy", tasks=make_tasks(1), grader=BlockingGrader(0.01))
    await run(env, fake_server, config_factory(num_tasks=1, rollouts=1), tmp_path, grade_timeout_s=5.0)
    (r,) = RunDir(tmp_path).iter_rollouts()
    assert r.grade is not None and r.grade.status == "correct" and r.error is None


async def test_grader_returning_a_non_grade_is_a_grader_error(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    env = SingleTurnEnv(id="toy", tasks=make_tasks(3), grader=FloatGrader())
    summary = await run(env, fake_server, config_factory(num_tasks=3, rollouts=1), tmp_path)
    rollouts = list(RunDir(tmp_path).iter_rollouts())
    assert len(rollouts) == 3
    for r in rollouts:
        assert r.grade is not None and r.grade.status == "error"
        assert r.grade.reason == "grader returned float, not a Grade"
        assert r.error is not None and r.error.kind == "grader" and r.reward is None
    assert summary.n_errors == 3  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_pooled_grade_runs_sync_checks_under_a_hard_timeout() -> None:
    from graders.pool import WorkerPool
    from hub.env.pooled import PooledGrade
    from hub.env.types import Timing

    task = make_tasks(1)[0]
    rollout = Rollout(
        task_id=task.id, rollout_index=0, messages=[], completion="Answer: 1", timing=Timing(started_at=0)
    )
    with WorkerPool(size=1, memory_mb=None) as pool:
        ok = await PooledGrade(sync_check_exact, pool=pool)(task, rollout)
        assert ok.status == "correct"
        hung = await PooledGrade(sync_check_hangs, timeout_s=0.5, pool=pool)(task, rollout)
        assert hung.status == "incorrect" and hung.reason.startswith("timeout:")
        assert "worker was killed" in hung.reason
        raised = await PooledGrade(sync_check_raises, pool=pool)(task, rollout)
        assert raised.status == "incorrect" and raised.grader_failed and raised.score == 0.0
        assert "ValueError: bad reference" in raised.reason
        bad = await PooledGrade(sync_check_returns_float, pool=pool)(task, rollout)
        assert bad.status == "error" and "returned float, not a Grade" in bad.reason
        assert pool.replaced == 1


async def test_regrading_twice_keeps_total_time(tmp_path: Path) -> None:
    from hub.env.types import Sampling
    from hub.run.evaluate import evaluate, regrade

    out = tmp_path / "run"
    async with FakeChatServer(responder=lambda req: "Answer: 10") as srv:
        await evaluate(
            "arith",
            model="fake",
            base_url=srv.base_url,
            out=out,
            num_tasks=4,
            sampling=Sampling(max_tokens=8),
        )

    def ungraded_time() -> list[float]:
        return [r.timing.total_s - r.timing.grade_s for r in RunDir(out).iter_rollouts()]

    before = ungraded_time()
    await regrade(out)
    await regrade(out)
    assert ungraded_time() == pytest.approx(before, abs=1e-9)
    for r in RunDir(out).iter_rollouts():
        assert r.timing.total_s == pytest.approx(
            r.timing.model_s + r.timing.env_s + r.timing.grade_s, abs=0.05
        )


async def test_an_environment_that_breaks_the_transcript_loses_only_its_rollout(
    fake_server: FakeChatServer, config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A step that puts a non-Message in the transcript used to crash the run (and every resume)
    while the rollout was recorded; now that rollout is an environment error and the run goes on."""
    from hub.env.types import Step

    class BadStep(SingleTurnEnv):
        async def step(self, state: Any, action: Any) -> Step:
            if state.task.id == "t1":
                return Step(messages=("not a message",), terminated=True)  # type: ignore[arg-type]
            return await super().step(state, action)

    env = BadStep(id="toy", version="1.0.0", tasks=make_tasks(3), grader=ExactGrader())
    await run(env, fake_server, config_factory(num_tasks=3, rollouts=2), tmp_path)
    rollouts = {(r.task_id, r.rollout_index): r for r in RunDir(tmp_path).iter_rollouts()}
    assert len(rollouts) == 6
    for (tid, _), r in rollouts.items():
        if tid == "t1":
            assert r.error is not None and r.error.kind == "environment" and r.reward is None
            assert "transcript cannot be recorded" in r.error.message
            assert [m.role for m in r.messages] == ["user", "assistant"]
        else:
            assert r.error is None and r.passed
