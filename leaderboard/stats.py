"""Seeded bootstrap confidence intervals over tasks.

The rollouts of one task are correlated (same prompt, same difficulty), so the task is the unit
that is resampled: each replicate draws ``n`` task means with replacement and averages them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["DEFAULT_RESAMPLES", "bootstrap_ci"]

DEFAULT_RESAMPLES = 2000


def bootstrap_ci(
    task_means: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean over tasks; None when there are no tasks.

    Deterministic for a given ``seed``. With one task (or all tasks equal) the interval is a point.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    values = [float(x) for x in task_means]
    n = len(values)
    if n == 0:
        return None
    if n == 1 or min(values) == max(values):
        return (values[0], values[0])
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = (1.0 - level) / 2.0
    lo = means[_rank(alpha, resamples)]
    hi = means[_rank(1.0 - alpha, resamples)]
    return (lo, hi)


def _rank(q: float, n: int) -> int:
    return min(n - 1, max(0, int(q * n)))
