"""Which SFT records to keep: by reward, by a person's label, corrected only, by task pass rate.

Records are the dictionaries of :func:`hub.train.export.sft_records` or of a hub's reviewed
data (``verihub export --sft --hub``): ``reward``, ``task_id``, and, where they come from a hub,
``label`` and ``corrected``. ``task_pass_rate`` is the share of graded rollouts of the record's
task that passed (over the run, or over the hub's runs of the version);
:func:`add_pass_rates` sets it for records that lack it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hub.env import UsageError

__all__ = ["LABELS", "SftFilter", "add_pass_rates", "apply_filters", "parse_band"]

#: The labels a person may give a rollout on a hub.
LABELS = ("correct", "incorrect", "reward_hack", "unclear")


@dataclass(frozen=True)
class SftFilter:
    """What to keep; every field left at its default keeps everything."""

    min_reward: float | None = None
    label: str | None = None
    corrected: bool = False
    pass_rate_band: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.label is not None and self.label not in LABELS:
            raise UsageError(f"--label must be one of {', '.join(LABELS)}, not {self.label!r}")

    @property
    def needs_reviews(self) -> bool:
        """Whether the filter asks for what only a hub has (labels, corrections)."""
        return self.label is not None or self.corrected


def parse_band(text: str) -> tuple[float, float]:
    """``"LO,HI"`` as two pass rates with 0 <= LO <= HI <= 1 (UsageError otherwise)."""
    lo_text, sep, hi_text = text.partition(",")
    try:
        lo, hi = float(lo_text), float(hi_text)
    except ValueError:
        lo = hi = -1.0
    if not sep or not 0.0 <= lo <= hi <= 1.0:
        raise UsageError(f"--pass-rate-band takes LO,HI with 0 <= LO <= HI <= 1 (e.g. 0.1,0.9), not {text!r}")
    return lo, hi


def add_pass_rates(records: list[dict[str, Any]], graded: Iterable[tuple[str, bool]]) -> None:
    """Set ``task_pass_rate`` on ``records`` that lack it, from ``graded`` (task id, passed) pairs."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for task_id, passed in graded:
        counts[task_id][0] += passed
        counts[task_id][1] += 1
    for rec in records:
        if "task_pass_rate" not in rec:
            k, n = counts.get(rec["task_id"], (0, 0))
            rec["task_pass_rate"] = k / n if n else None


def _keep(rec: dict[str, Any], f: SftFilter) -> bool:
    if f.min_reward is not None and (rec.get("reward") is None or rec["reward"] < f.min_reward):
        return False
    if f.label is not None and rec.get("label") != f.label:
        return False
    if f.corrected and not rec.get("corrected"):
        return False
    if f.pass_rate_band is not None:
        rate = rec.get("task_pass_rate")
        lo, hi = f.pass_rate_band
        if rate is None or not lo <= rate <= hi:
            return False
    return True


def apply_filters(records: Iterable[dict[str, Any]], f: SftFilter) -> list[dict[str, Any]]:
    """The records ``f`` keeps, in order."""
    return [rec for rec in records if _keep(rec, f)]
