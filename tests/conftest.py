"""Shared fixtures: a loopback fake model server, toy environments, run configs; and the fast
path: plain ``pytest`` (no paths, no ``-m``) deselects the tests marked with what they start
(docs/testing.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from graders.grade import Grade
from hub import Rollout, SingleTurnEnv, Task
from hub.env.types import Sampling
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunConfig


def make_tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", prompt=f"What is {i} + 1?", answer=str(i + 1)) for i in range(n)]


def correct_responder(request: dict[str, Any]) -> str:
    """Answers 'What is i + 1?' correctly for even i, wrongly for odd i."""
    text = request["messages"][-1]["content"]
    i = int(text.split()[2])
    return f"Answer: {i + 1 if i % 2 == 0 else i}"


class RaisingGrader:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        raise RuntimeError("grader bug")


class HangingGrader:
    async def __call__(self, response: str, *, reference: Any) -> Grade:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


class BlockingGrader:
    """Blocks the event loop (a synchronous sleep): asyncio cannot interrupt it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        time.sleep(self.seconds)
        return Grade.correct()


class FloatGrader:
    """Returns a bare float instead of a Grade (a common bug)."""

    async def __call__(self, response: str, *, reference: Any) -> Grade:
        return 1.0  # type: ignore[return-value]


# Synchronous checks for hub.env.pooled.PooledGrade: module-level, so pool workers can import them.
def sync_check_exact(task: Task, completion: str) -> Grade:
    ok = completion.strip().endswith(str(task.answer))
    return Grade.correct() if ok else Grade.incorrect()


def sync_check_hangs(task: Task, completion: str) -> Grade:
    time.sleep(3600)
    return Grade.correct()


def sync_check_raises(task: Task, completion: str) -> Grade:
    raise ValueError("bad reference")


def sync_check_returns_float(task: Task, completion: str) -> Grade:
    return 1.0  # type: ignore[return-value]


HEAVY_MARKS = ("sandbox", "postgres", "browser", "model", "vf_venv", "slow")
FAST_PATH = "not (" + " or ".join(HEAVY_MARKS) + ")"
"""The marker expression of plain ``pytest``; ``bash scripts/test.sh`` runs everything."""

# Session fixtures that build a real submission bundle: ``submit`` builds in the sandbox, checks
# in the sandbox and evaluates the embedded model, so every test using one needs all three.
FIXTURE_MARKS: dict[str, tuple[str, ...]] = {
    "arith_bundle": ("model", "sandbox", "slow"),
    "scaffold_bundle": ("model", "sandbox", "slow"),
    "local_model": ("model", "sandbox", "slow"),
    "ray_local": ("slow",),  # a local Ray cluster: a dozen processes, tens of seconds to start
}


def pytest_configure(config: pytest.Config) -> None:
    """Plain ``pytest`` from the repository root runs the fast path; given paths or ``-m`` it
    runs what was asked."""
    from_testpaths = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if from_testpaths and not config.option.markexpr and not config.option.keyword:
        config.option.markexpr = FAST_PATH


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the tests that use a fixture in FIXTURE_MARKS (before ``-m`` deselects)."""
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            for mark in FIXTURE_MARKS.get(name, ()):
                item.add_marker(mark)


@pytest.fixture
def toy_env() -> SingleTurnEnv:
    return SingleTurnEnv(id="toy", version="1.0.0", tasks=make_tasks(6), grader=ExactGrader())


def make_config(env_id: str = "toy", *, num_tasks: int = 6, rollouts: int = 2, **over: Any) -> RunConfig:
    fields: dict[str, Any] = dict(
        env_id=env_id,
        env_version="1.0.0",
        env_hash="sha256:test",
        model="fake",
        base_url="http://127.0.0.1:1/v1",
        sampling=Sampling(max_tokens=16),
        seed=0,
        split="test",
        num_tasks=num_tasks,
        rollouts_per_task=rollouts,
        max_turns=1,
        verihub_version="0.1.0",
    )
    fields.update(over)
    return RunConfig(**fields)


@pytest.fixture
def config_factory() -> Callable[..., RunConfig]:
    return make_config


@pytest.fixture
async def fake_server() -> AsyncIterator[FakeChatServer]:
    async with FakeChatServer(responder=correct_responder) as server:
        yield server


@pytest.fixture
def rollout_factory() -> Callable[..., Rollout]:
    from hub.env.types import Timing

    def make(
        task_id: str = "t0",
        index: int = 0,
        *,
        reward: float | None = 1.0,
        passed: bool = True,
        error: Any = None,
    ) -> Rollout:
        return Rollout(
            task_id=task_id,
            rollout_index=index,
            messages=[],
            completion="",
            reward=reward,
            passed=passed,
            timing=Timing(started_at=0.0),
            error=error,
        )

    return make


@pytest.fixture
def repo_root() -> Iterator[Path]:
    yield Path(__file__).resolve().parents[1]
