"""Per-task difficulty: the pass-rate histogram of a run, with 0% and 100% tasks in bins of their own.

A task no rollout passed and a task every rollout passed both give RL no signal, so they are not
folded into the neighbouring tenth: the histogram has a ``0%`` bin, ten bins ``(0, 10%]`` ...
``(90%, 100%)`` and a ``100%`` bin. The learnable band (shared with ``verihub calibrate``) is
counted exactly with :func:`hub.review.in_band`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel

__all__ = ["HistogramBin", "difficulty_bins"]

BinKind = Literal["zero", "partial", "full"]


class HistogramBin(BaseModel):
    """Tasks whose pass rate lies in ``(low, high]`` (``[0, 0]`` and ``[1, 1]`` for the ends)."""

    label: str
    low: float
    high: float
    count: int
    kind: BinKind


def _label(lo: float, hi: float) -> str:
    close = ")" if hi >= 1.0 else "]"
    return f"({lo:.0%}, {hi:.0%}{close}"


def difficulty_bins(pass_rates: Iterable[float], *, tenths: int = 10) -> list[HistogramBin]:
    """Count tasks by pass rate: 0%, ``tenths`` equal bins strictly between, 100%."""
    rates = list(pass_rates)
    inner = [0] * tenths
    zero = full = 0
    for p in rates:
        if p <= 0.0:
            zero += 1
        elif p >= 1.0:
            full += 1
        else:  # (i/n, (i+1)/n]: 0.1 falls in the first bin, 0.7 in the seventh
            i = min(tenths - 1, max(0, int(p * tenths - 1e-9)))
            inner[i] += 1
    bins = [HistogramBin(label="0%", low=0.0, high=0.0, count=zero, kind="zero")]
    for i, count in enumerate(inner):
        lo, hi = i / tenths, (i + 1) / tenths
        bins.append(HistogramBin(label=_label(lo, hi), low=lo, high=hi, count=count, kind="partial"))
    bins.append(HistogramBin(label="100%", low=1.0, high=1.0, count=full, kind="full"))
    return bins
