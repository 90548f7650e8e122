"""The infrastructure-error share of a run, and the flag for runs where it is too high.

An errored rollout has no verdict: the model call, the environment or the grader failed (a grading
timeout caused by the response itself is graded incorrect, not an error). Its mean reward is over
graded rollouts only, so a run that lost many rollouts to errors measured a different, possibly
easier, sample of the tasks. Such a run is still shown, but flagged, when its share of errored
rollouts exceeds a threshold (default 5%).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from leaderboard.entry import BoardEntry

__all__ = ["DEFAULT_INFRA_THRESHOLD", "InfraCheck", "infra_check"]

DEFAULT_INFRA_THRESHOLD = 0.05


@dataclass(frozen=True)
class InfraCheck:
    """A run's errored rollouts against the threshold."""

    n_errors: int
    n_rollouts: int
    by_kind: Mapping[str, int]
    threshold: float

    @property
    def share(self) -> float:
        return self.n_errors / self.n_rollouts if self.n_rollouts else 0.0

    @property
    def flagged(self) -> bool:
        return self.share > self.threshold

    def describe(self) -> str:
        """``12.5% of rollouts errored (model 3, grader 1), above the 5% threshold``."""
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.by_kind.items()) if v)
        text = f"{self.share:.1%} of rollouts errored" + (f" ({kinds})" if kinds else "")
        relation = "above" if self.flagged else "within"
        return f"{text}, {relation} the {self.threshold:.0%} threshold"


def infra_check(
    entry: BoardEntry,
    *,
    threshold: float = DEFAULT_INFRA_THRESHOLD,
    kinds: Collection[str] | None = None,
) -> InfraCheck:
    """The infrastructure errors of ``entry``: its summary's ``errors_by_kind`` restricted to
    ``kinds`` (None: every kind), or its ``n_errors`` when the entry predates ``errors_by_kind``."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("the infrastructure-error threshold is a share between 0 and 1")
    by_kind = {k: v for k, v in entry.errors_by_kind.items() if kinds is None or k in kinds}
    n_errors = sum(by_kind.values()) if entry.errors_by_kind else entry.n_errors  # unknown kinds: all
    return InfraCheck(n_errors=n_errors, n_rollouts=entry.n_rollouts, by_kind=by_kind, threshold=threshold)
