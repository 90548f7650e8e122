"""How slow this host is, taken once when a review worker starts, to scale the review's time limits.

A review's limits (the check's sandbox wall-clock and CPU limits, each grade's timeout) are set for
an ordinary host. On a slower one a package that is fine would run past them and be blamed for the
hub's hardware. :func:`calibrate` times a fixed pure-Python workload in CPU seconds (so that load
from other processes does not count: :mod:`hub.server.reviews.blame` handles load) and compares it
with the same workload on the reference host; the ratio, never below 1 and at most
:data:`MAX_SCALE`, multiplies the time limits. ``VERIHUB_HUB_REVIEW_TIME_SCALE`` fixes the factor
instead (an operator who measured the host another way).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

__all__ = ["MAX_SCALE", "REFERENCE_CPU_S", "HostSpeed", "calibrate", "scale_for"]

#: CPU seconds :func:`_workload` takes on the reference host (median of its rounds, measured
#: with ``python -c "from hub.server.reviews.hostspeed import calibrate; print(calibrate())"``
#: on the 2-core development host, Python 3.11).
REFERENCE_CPU_S = 0.075
#: The largest factor applied: a host more than this much slower than the reference should not
#: run reviews (the worker says so in its log).
MAX_SCALE = 4.0


@dataclass(frozen=True)
class HostSpeed:
    """A calibration: the workload's median CPU seconds and the factor the limits get."""

    workload_cpu_s: float
    scale: float

    def __str__(self) -> str:
        return (
            f"reference workload {self.workload_cpu_s * 1000:.0f} ms CPU "
            f"(reference host {REFERENCE_CPU_S * 1000:.0f} ms): time limits x{self.scale:.2f}"
        )


def _workload() -> int:
    """A fixed mix of what a review spends time on: interpreter loops, dicts, strings."""
    acc = 0
    table: dict[str, int] = {}
    for i in range(240_000):
        key = f"k{i % 977}"
        table[key] = table.get(key, 0) + i
        acc = (acc * 31 + len(key) + (i ^ (i >> 3))) % 1_000_003
    return acc + sum(table.values()) % 7


def scale_for(workload_cpu_s: float, reference_cpu_s: float = REFERENCE_CPU_S) -> float:
    """The limits' factor for a host whose workload took ``workload_cpu_s``: between 1 and
    :data:`MAX_SCALE` (a faster host keeps the ordinary limits)."""
    if workload_cpu_s <= 0 or reference_cpu_s <= 0:
        return 1.0
    return round(min(MAX_SCALE, max(1.0, workload_cpu_s / reference_cpu_s)), 2)


def calibrate(rounds: int = 5) -> HostSpeed:
    """Time the workload ``rounds`` times in CPU seconds; the median decides the factor."""
    times = []
    for _ in range(max(1, rounds)):
        start = time.process_time()
        _workload()
        times.append(time.process_time() - start)
    median = statistics.median(times)
    return HostSpeed(workload_cpu_s=median, scale=scale_for(median))
