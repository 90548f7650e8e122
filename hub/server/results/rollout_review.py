"""What a rollout page shows of people's review work, in one call: the rollout, its shown label
and label history, its corrected copies, and whether the requester may add to them."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from hub.env.types import Rollout
from hub.server.accounts.users import Principal
from hub.server.core.models import Correction, RolloutLabel, Run
from hub.server.core.storage import Storage
from hub.server.results.corrections import corrections_of
from hub.server.results.labels import may_label, rollout_labels, target

__all__ = ["RolloutReview", "rollout_review"]


@dataclass(frozen=True)
class RolloutReview:
    """``history`` is newest first (its first item is ``current``); ``corrections`` oldest first."""

    run: Run
    index: int
    rollout: Rollout
    current: RolloutLabel | None
    history: list[RolloutLabel]
    corrections: list[Correction]
    can_label: bool


def rollout_review(
    session: Session, storage: Storage, who: Principal | None, public_id: str, index: int
) -> RolloutReview:
    """The review state of rollout ``index`` of run ``public_id`` as ``who`` may see it; raises
    :class:`~hub.server.results.labels.LabelError` (404) when the run or rollout is not visible."""
    run, rollout = target(session, storage, who, public_id, index, write=False)
    history = rollout_labels(session, run, index)
    return RolloutReview(
        run=run,
        index=index,
        rollout=rollout,
        current=history[0] if history else None,
        history=history,
        corrections=corrections_of(session, [run], index),
        can_label=who is not None and may_label(session, who, run.version.environment),
    )
