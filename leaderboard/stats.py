"""Seeded bootstrap confidence intervals over tasks.

The rollouts of one task are correlated (same prompt, same difficulty), so the task is the unit
that is resampled: each replicate draws ``n`` tasks with replacement and takes the mean of
their rewards, each task weighted by its graded rollouts (so the interval is about the same
rollout-weighted mean a run summary reports, even when errors leave tasks with fewer rollouts).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["DEFAULT_RESAMPLES", "bootstrap_ci"]

DEFAULT_RESAMPLES = 2000


def bootstrap_ci(
    task_means: Sequence[float],
    *,
    weights: Sequence[float] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean over tasks; None when there are no tasks.

    ``weights`` (one per task, e.g. its graded rollouts) make each replicate a weighted mean;
    without them every task counts once. Deterministic for a given ``seed``. With one task (or all
    tasks equal) the interval is a point.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    values = [float(x) for x in task_means]
    w = [1.0] * len(values) if weights is None else [float(x) for x in weights]
    if len(w) != len(values) or any(x <= 0 for x in w):
        raise ValueError("weights must be positive, one per task")
    n = len(values)
    if n == 0:
        return None
    if n == 1 or min(values) == max(values):
        return (values[0], values[0])
    rng = random.Random(seed)
    pairs = [(wi * v, wi) for v, wi in zip(values, w, strict=True)]
    means = []
    for _ in range(resamples):
        draw = rng.choices(pairs, k=n)
        means.append(sum(s for s, _ in draw) / sum(c for _, c in draw))
    means.sort()
    alpha = (1.0 - level) / 2.0
    lo = means[_rank(alpha, resamples)]
    hi = means[_rank(1.0 - alpha, resamples)]
    return (lo, hi)


def _rank(q: float, n: int) -> int:
    return min(n - 1, max(0, int(q * n)))
