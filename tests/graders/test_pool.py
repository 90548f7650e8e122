"""graders.pool: results, errors, hard timeouts, memory caps, crashes, async use."""

from __future__ import annotations

import asyncio
import functools
import operator
import os
import threading
import time
from pathlib import Path

import pytest

from graders.pool import (
    PoolClosed,
    PoolConfig,
    PoolTimeout,
    WorkerDied,
    WorkerError,
    WorkerPool,
)


@pytest.fixture
def pool() -> WorkerPool:
    p = WorkerPool(PoolConfig(size=1, memory_mb=512, default_timeout=5.0))
    yield p  # type: ignore[misc]
    p.close()


def test_submit_returns_results_and_reuses_the_worker(pool: WorkerPool) -> None:
    assert pool.submit(operator.add, 2, 3) == 5
    pid = pool.submit(os.getpid)
    assert pid != os.getpid()
    assert pool.submit(os.getpid) == pid  # persistent
    assert pool.pids() == [pid]


def test_keyword_arguments_and_unpicklable_results(pool: WorkerPool) -> None:
    assert pool.submit(int, "ff", base=16) == 255
    with pytest.raises(WorkerError):
        pool.submit(threading.Lock)  # a lock cannot be pickled back
    with pytest.raises(WorkerError):
        pool.submit(lambda: 1)  # a lambda cannot be sent
    assert pool.submit(abs, -4) == 4
    assert pool.replaced == 0


def test_exceptions_come_back_with_their_type(pool: WorkerPool) -> None:
    with pytest.raises(WorkerError) as info:
        pool.submit(int, "not a number")
    assert info.value.type_name == "ValueError"
    assert "not a number" in info.value.message
    assert pool.submit(abs, -1) == 1  # the worker survived


def test_timeout_kills_and_replaces_the_worker(pool: WorkerPool) -> None:
    old = pool.submit(os.getpid)
    with pytest.raises(PoolTimeout):
        pool.submit(time.sleep, 30, timeout=0.5)
    new = pool.submit(os.getpid, timeout=30)
    assert new != old
    assert pool.replaced == 1
    with pytest.raises(ProcessLookupError):
        os.kill(old, 0)  # the hung worker is gone


def test_memory_cap_is_enforced_in_the_worker(pool: WorkerPool) -> None:
    with pytest.raises(WorkerError) as info:
        pool.submit(bytearray, 2 * 1024**3)  # 2 GiB > 512 MiB cap
    assert info.value.type_name == "MemoryError"
    assert pool.submit(abs, -2) == 2


def test_a_dying_worker_is_reported_and_replaced(pool: WorkerPool) -> None:
    old = pool.submit(os.getpid)
    with pytest.raises(WorkerDied):
        pool.submit(os._exit, 3)
    assert pool.submit(os.getpid, timeout=30) != old


def _meet(mine: str, other: str) -> bool:
    """Announces itself, then waits (up to 20 s) for the other call: True when both ran at once."""
    Path(mine).touch()
    for _ in range(2000):
        if Path(other).exists():
            return True
        time.sleep(0.01)
    return False


async def test_async_submit_runs_concurrently(tmp_path: Path) -> None:
    with WorkerPool(size=2, default_timeout=30.0) as pool:
        await pool.asubmit(abs, 0, timeout=30)  # both workers started
        await asyncio.gather(*(pool.asubmit(abs, 0, timeout=30) for _ in range(2)))
        a, b = str(tmp_path / "a"), str(tmp_path / "b")
        results = await asyncio.gather(pool.asubmit(_meet, a, b), pool.asubmit(_meet, b, a))
        assert results == [True, True]  # two workers: each call saw the other running
        with pytest.raises(PoolTimeout):
            await pool.asubmit(time.sleep, 10, timeout=0.3)
        assert await pool.asubmit(operator.mul, 6, 7, timeout=30) == 42


def test_closed_pool_refuses_work() -> None:
    pool = WorkerPool(size=1)
    assert pool.submit(abs, -3, timeout=30) == 3
    pool.close()
    assert pool.closed
    with pytest.raises(PoolClosed):
        pool.submit(abs, -3)


def test_config_is_validated() -> None:
    with pytest.raises(ValueError):
        PoolConfig(size=0)
    with pytest.raises(ValueError):
        PoolConfig(memory_mb=1)
    with pytest.raises(ValueError):
        PoolConfig(default_timeout=0)
    with pytest.raises(TypeError):
        WorkerPool(PoolConfig(), size=2)
    with pytest.raises(ValueError):
        WorkerPool(size=1).submit(abs, 1, timeout=0)


def _slow_start(log: str) -> None:
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(2.0)


@pytest.mark.slow
def test_replacement_workers_are_forked_warm(tmp_path: Path) -> None:
    """A killed worker's replacement is forked from the template that already ran the (here
    deliberately slow) initializer: the next call does not wait for a cold start."""
    starts = tmp_path / "starts"
    slow_start = functools.partial(_slow_start, str(starts))
    with WorkerPool(PoolConfig(size=1, memory_mb=512, initializer=slow_start)) as slow:
        slow.wait_ready()
        for _ in range(3):
            with pytest.raises(PoolTimeout):
                slow.submit(time.sleep, 30, timeout=0.3)
            assert slow.submit(abs, -1, timeout=30) == 1
        assert slow.replaced == 3
    assert len(starts.read_text().splitlines()) == 1  # the initializer ran once: no cold start


def test_repeated_hostile_math_each_times_out_and_the_pool_recovers() -> None:
    """Three slow checks in a row on one warmed math worker (answers the cost screen lets through):
    each call ends as ``timeout``, its worker is replaced, and the pool still works."""
    from graders.math import check
    from graders.math.parse import warm_up

    with WorkerPool(PoolConfig(size=1, memory_mb=1024, initializer=warm_up)) as math_pool:
        math_pool.wait_ready()
        timeout = 0.02  # the answer passes the cost screen and takes far longer to check
        for _ in range(3):
            verdict = check("\\boxed{\\tan(\\tan(x))}", reference="x^{2}+1", pool=math_pool, timeout=timeout)
            assert verdict.status == "timeout", verdict
        assert check("\\boxed{5}", reference="5", pool=math_pool, timeout=30).passed
        assert math_pool.replaced == 3


def test_shared_pool_is_one_per_name_and_restarts_after_close() -> None:
    from graders.pool import shared_pool

    config = PoolConfig(size=1, memory_mb=256)
    first = shared_pool("tests.shared", config)
    assert shared_pool("tests.shared", config) is first
    assert shared_pool("tests.other", config) is not first
    first.close()
    again = shared_pool("tests.shared", config)
    assert again is not first and not again.closed
    assert again.submit(abs, -3) == 3
    again.close()
    shared_pool("tests.other", config).close()
