"""CPU time for the tests' speed checks: this process's CPU seconds, not the wall clock.

A busy machine (other tests in parallel, other jobs) stretches the wall clock but not the CPU
time a call spends, so a test that bounds CPU time fails for slow code and not for a slow
machine. Growth is judged at ten times the input: a linear scan does about ten times the work,
a quadratic one a hundred times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["FLOOR_S", "assert_linear", "cpu_seconds"]

T = TypeVar("T")

FLOOR_S = 0.005
"""The smallest CPU time a ratio is taken against (below it, timer resolution is the noise)."""


def cpu_seconds(
    run: Callable[[], object], *, repeat: int = 1, before: Callable[[], object] | None = None
) -> float:
    """The least CPU time of ``repeat`` calls of ``run``; ``before`` runs untimed before each."""
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def assert_linear(
    run: Callable[[T], object],
    small: T,
    large: T,
    *,
    what: str,
    factor: float = 30.0,
    max_cpu_s: float = 5.0,
    before: Callable[[], object] | None = None,
) -> None:
    """``run(large)`` (about ten times ``small``) costs under ``factor`` times ``run(small)``
    in CPU time, and under ``max_cpu_s`` outright."""
    cost_small = cpu_seconds(lambda: run(small), repeat=3, before=before)
    cost_large = cpu_seconds(lambda: run(large), before=before)
    assert cost_large < factor * max(cost_small, FLOOR_S), (
        f"{what}: {cost_small:.3f}s -> {cost_large:.3f}s CPU"
    )
    assert cost_large < max_cpu_s, f"{what}: {cost_large:.2f}s CPU"
