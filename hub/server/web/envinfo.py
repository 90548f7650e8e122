"""What an environment's page shows beside its README: the results summary (the best visible run
per model of the newest version that has runs, linked to its eval card), and the facts (author, last
update, install count); each version's verifier card is :mod:`hub.server.web.verifier_card`'s.

Runs come from :func:`hub.server.core.queries.visible_runs` only, so a private run is in the
summary for those who may see it (its pusher, admins) and nowhere else.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from pydantic import ValidationError
from sqlalchemy.orm import Session

from hub.server.accounts import Principal
from hub.server.core import (
    PENDING,
    UNVERIFIED,
    VERIFIED,
    VERIFY_ERROR,
    Environment,
    Run,
    Version,
    visible_runs,
)
from leaderboard import BoardEntry

__all__ = [
    "BestRun",
    "ResultsSummary",
    "installs",
    "last_update",
    "results_summary",
]


#: How a run's re-verification shows: what the hub checked, a sample of the pushed verdicts.
_REGRADE = {
    PENDING: "re-grade pending",
    VERIFIED: "re-graded: consistent",
    UNVERIFIED: "re-graded: inconsistent",
    VERIFY_ERROR: "re-grade failed",
}


@dataclass(frozen=True)
class BestRun:
    """A model's best run on the summary's version."""

    model: str
    label: str
    mean_reward: float | None
    ci95: tuple[float, float] | None
    public_id: str
    pusher: str
    private: bool
    regrade: str  # the run's re-verification state (a style class)
    regrade_text: str  # what it means
    href: str  # its row on the eval card


@dataclass(frozen=True)
class ResultsSummary:
    """The best run per model of ``version`` (best mean reward first), and the card's link."""

    version: str
    card_href: str
    runs: list[BestRun]
    n_runs: int


def card_href(ref: str, version: str) -> str:
    return f"/{ref}/v/{quote(version, safe='')}"


def _entry(run: Run) -> BoardEntry | None:
    try:
        return BoardEntry.model_validate_json(run.entry)
    except ValidationError:
        return None


def _better(a: BoardEntry, b: BoardEntry) -> bool:
    """Whether ``a`` ranks above ``b``: a score above none, a higher mean, then the earlier run."""
    if (a.mean_reward is None) != (b.mean_reward is None):
        return a.mean_reward is not None
    return (a.mean_reward or 0.0) > (b.mean_reward or 0.0)


def results_summary(
    session: Session, who: Principal | None, env: Environment, ref: str
) -> ResultsSummary | None:
    """The summary of the newest version with runs ``who`` may see (None: no such run)."""
    runs = visible_runs(session, who, env=env)
    if not runs:
        return None
    newest = max(runs, key=lambda r: r.version_id).version
    best: dict[str, tuple[Run, BoardEntry]] = {}
    n_runs = 0
    for run in runs:  # oldest first: of equal scores the earlier run stays
        if run.version_id != newest.id:
            continue
        entry = _entry(run)
        if entry is None:
            continue
        n_runs += 1
        held = best.get(entry.model)
        if held is None or _better(entry, held[1]):
            best[entry.model] = (run, entry)
    base = card_href(ref, newest.version)
    shown = [
        BestRun(
            model=entry.model,
            label=run.label.strip() or entry.label or "",
            mean_reward=entry.mean_reward,
            ci95=entry.ci95,
            public_id=run.public_id,
            pusher=run.owner.name,
            private=run.private,
            regrade=run.verify_state,
            regrade_text=_REGRADE.get(run.verify_state, run.verify_state),
            href=f"{base}#run-{run.public_id}",
        )
        for run, entry in best.values()
    ]
    shown.sort(key=lambda b: (b.mean_reward is None, -(b.mean_reward or 0.0), b.model))
    return ResultsSummary(version=newest.version, card_href=base, runs=shown, n_runs=n_runs)


def installs(versions: Sequence[Version]) -> int:
    """The environment's install count: its versions' wheel downloads."""
    return sum(v.downloads or 0 for v in versions)


def last_update(versions: Sequence[Version]) -> dt.datetime | None:
    """When a version was last uploaded or reviewed."""
    times = [t for v in versions for t in (v.uploaded_at, v.reviewed_at) if t is not None]
    return max(times, default=None)
