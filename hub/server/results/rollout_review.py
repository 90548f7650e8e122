"""What a rollout page shows of people's review work, in one call: the rollout, its shown label
and label history, its corrected copies, and whether the requester may add to them."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from hub.env import Rollout
from hub.server.accounts import Principal
from hub.server.core import Correction, RolloutLabel, Run, Storage
from hub.server.results.corrections import corrections_of
from hub.server.results.labels import may_label, rollout_labels, target

__all__ = ["ReviewState", "RolloutReview", "review_state", "rollout_review"]


@dataclass(frozen=True)
class ReviewState:
    """``history`` is newest first (its first item is ``current``); ``corrections`` oldest first."""

    current: RolloutLabel | None
    history: list[RolloutLabel]
    corrections: list[Correction]
    can_label: bool


@dataclass(frozen=True)
class RolloutReview(ReviewState):
    """:class:`ReviewState` with the rollout it is about."""

    run: Run
    index: int
    rollout: Rollout


def review_state(session: Session, who: Principal | None, run: Run, index: int) -> ReviewState:
    """The labels and corrections of rollout ``index`` of ``run`` (which the caller found visible
    to ``who``, e.g. with :func:`hub.server.core.queries.find_run`); reads no archive."""
    history = rollout_labels(session, run, index)
    return ReviewState(
        current=history[0] if history else None,
        history=history,
        corrections=corrections_of(session, [run], index),
        can_label=who is not None and may_label(session, who, run.version.environment),
    )


def rollout_review(
    session: Session, storage: Storage, who: Principal | None, public_id: str, index: int
) -> RolloutReview:
    """The review state of rollout ``index`` of run ``public_id`` as ``who`` may see it; raises
    :class:`~hub.server.results.labels.LabelError` (404) when the run or rollout is not visible."""
    run, rollout = target(session, storage, who, public_id, index, write=False)
    state = review_state(session, who, run, index)
    return RolloutReview(
        current=state.current,
        history=state.history,
        corrections=state.corrections,
        can_label=state.can_label,
        run=run,
        index=index,
        rollout=rollout,
    )
