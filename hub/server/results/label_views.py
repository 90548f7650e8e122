"""What the run pages and eval cards show of people's labels, built on :mod:`.labels`.

- :func:`label_filter`: the run page's ``label`` filter as an ``extra`` for
  :func:`hub.server.results.rollout_query.list_rollouts` (``correct``, ``incorrect``,
  ``reward_hack``, ``unclear``: the rollouts whose *shown* label has that value; ``none``: no label;
  ``any``: some label). It reads ``rollout_labels`` once per run, not once per row.
- :func:`run_label_summaries`: per run, how many rollouts are labelled and how often the grader
  agrees with the labels (a Wilson 95% interval), for runs with labels only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from hub.server.core import RolloutLabel, Run, RunRollout, Storage
from hub.server.results.labels import LABELS, Agreement, LabelCounts, agreement, label_counts_many
from hub.server.results.rollout_query import ExtraFilter

__all__ = ["LABEL_CHOICES", "LabelSummary", "label_filter", "run_label_summaries"]

#: What the run page's ``label`` filter takes.
LABEL_CHOICES = (*LABELS, "none", "any")


def label_filter(run_id: int, value: str) -> ExtraFilter | None:
    """The ``extra`` narrowing run ``run_id``'s rollouts to those whose shown label is ``value``
    (see the module docstring); None for no filter."""
    if not value:
        return None
    labelled = select(RolloutLabel.rollout).where(RolloutLabel.run_id == run_id)
    if value == "any":
        return lambda stmt: stmt.where(RunRollout.idx.in_(labelled))
    if value == "none":
        return lambda stmt: stmt.where(RunRollout.idx.not_in(labelled))
    if value not in LABELS:
        raise ValueError(f"no label filter {value!r}")
    newest = (
        select(func.max(RolloutLabel.id)).where(RolloutLabel.run_id == run_id).group_by(RolloutLabel.rollout)
    )
    shown = select(RolloutLabel.rollout).where(RolloutLabel.id.in_(newest), RolloutLabel.value == value)

    def narrow(stmt: Select[Any]) -> Select[Any]:
        return stmt.where(RunRollout.idx.in_(shown))

    return narrow


@dataclass(frozen=True)
class LabelSummary:
    """A run's labels as a page line: counts, and the grader's agreement with them."""

    counts: LabelCounts
    agreement: Agreement

    def text(self) -> str:
        """One line: ``N of M rollouts labelled; grader agrees on K of J: 80% [55%, 93%]``."""
        c, r = self.counts, self.agreement.rate
        head = f"{c.labelled:,} of {c.rollouts:,} rollouts labelled"
        if r.value is None:
            return f"{head}; no decisive label on a graded rollout yet"
        low, high = r.ci95
        return (
            f"{head}; grader agrees on {r.k} of {r.n}: {100 * r.value:.0f}% "
            f"[{100 * low:.0f}%, {100 * high:.0f}%] (95% interval)"
        )


def run_label_summaries(session: Session, storage: Storage, runs: Sequence[Run]) -> dict[int, LabelSummary]:
    """The :class:`LabelSummary` of each of ``runs`` that has a label, by run id."""
    counts = label_counts_many(session, runs)
    return {
        run.id: LabelSummary(counts[run.id], agreement(session, storage, [run]))
        for run in runs
        if counts[run.id].labelled
    }
