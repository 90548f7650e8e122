"""Fixtures for grader tests: a small math worker pool shared by the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graders.math.parse import warm_up
from graders.pool import PoolConfig, WorkerPool


@pytest.fixture(scope="session")
def math_pool() -> Iterator[WorkerPool]:
    """Two warmed-up math workers (1 GiB cap each), closed at the end of the session."""
    pool = WorkerPool(PoolConfig(size=2, memory_mb=1024, initializer=warm_up))
    pool.wait_ready()
    yield pool
    pool.close()
