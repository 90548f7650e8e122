"""Who a failed review blames: the package, or the hub's own host.

A review that fails only because the check ran past its time limits, while the worker's host was
loaded, says nothing about the package: the queue runs it again, and if it still fails that way
the version ends ``error`` (the hub's fault) rather than ``failed``. Load is the 1-minute load
average per core, taken at the review's start and end (the larger counts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["LOADED_PER_CORE", "Outcome", "host_load", "limits_only", "outcome"]

#: A host whose load average per core is above this is too busy to judge a package's speed.
LOADED_PER_CORE = 1.0

Outcome = Literal["passed", "failed", "retry", "error"]

_TIME = re.compile(r"wall-clock limit|CPU limit|time limit|timed out|took longer|hung", re.IGNORECASE)
_CHECK_FAILED = re.compile(r"\bcheck fails\b|\bcheck failed\b", re.IGNORECASE)


def host_load() -> float:
    """The 1-minute load average per core (0 where the platform has none)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


def limits_only(report: Mapping[str, Any]) -> bool:
    """Whether every failure in a review report is a time limit (and there is at least one)."""
    check = report.get("check") or {}
    results = check.get("results", []) if isinstance(check, Mapping) else []
    fails = [r for r in results if isinstance(r, Mapping) and r.get("status") == "fail"]
    if not fails or not all(_TIME.search(str(r.get("reason", ""))) for r in fails):
        return False
    problems = [str(p) for p in report.get("problems") or []]
    return all(_TIME.search(p) or _CHECK_FAILED.search(p) for p in problems)


def outcome(report: Mapping[str, Any], *, attempt: int, max_attempts: int, load_per_core: float) -> Outcome:
    """What to record for a finished review: its verdict, another try, or the hub's error."""
    if report.get("passed"):
        return "passed"
    if not limits_only(report) or load_per_core <= LOADED_PER_CORE:
        return "failed"
    return "retry" if attempt < max_attempts else "error"
