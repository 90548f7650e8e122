"""Pushed runs as the result pages read them: board entries, verified summaries, verification status
and the filters of a leaderboard (GET query parameters).

Rows come from :func:`hub.server.core.queries.visible_runs` / :func:`~hub.server.core.queries.find_run` only,
so nothing here decides who sees what. Each :class:`ShownRun` carries the run's
:class:`leaderboard.BoardEntry` rewritten for the hub: its id is the run's public id (two users may
push the same run directory), its environment is ``owner/env_id`` (two owners may both publish an
``arith``), its owner is the pusher and its label the run's label.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from hub.run import Summary
from hub.server.core import PENDING, UNVERIFIED, VERIFIED, VERIFY_ERROR, Run
from hub.server.results.band_tasks import ENVIRONMENT, ROLLOUTS, source_note, stored_tasks_sha
from leaderboard import BoardEntry, RunFilter

__all__ = [
    "REGRADE_LABELS",
    "FilterForm",
    "ShownRun",
    "of_origin",
    "origin_param",
    "parse_filter",
    "shown_runs",
    "verify_status",
]

#: How a run's re-verification state is shown: what was checked. "Consistent" means a sample of
#: the pushed verdicts re-grade the same with the version's grader; it says nothing of whether
#: the model produced the transcripts honestly.
REGRADE_LABELS = {
    PENDING: "re-grade pending",
    VERIFIED: "re-graded: consistent",
    UNVERIFIED: "re-graded: inconsistent",
    VERIFY_ERROR: "re-grade failed",
}

_REASON_KEYS = ("reason", "message", "error", "detail", "summary")
_MAX_REASON = 400


@dataclass(frozen=True)
class ShownRun:
    """One visible run: its database row's plain fields and what the leaderboard code needs;
    ``band_note`` says where its band export's tasks come from."""

    public_id: str
    ref: str
    version: str
    pusher: str
    label: str
    private: bool
    pushed_at: dt.datetime
    status: str  # shown (REGRADE_LABELS)
    reason: str
    entry: BoardEntry
    summary: Summary
    band_note: str = ""
    badge: str = ""  # the stored state (a style class)
    origin: str = "pushed"  # or "hub": the hub ran it itself against ``endpoint``
    endpoint: str = ""


def _reverify_reason(state: str, data: dict[str, Any]) -> str:
    """What :mod:`hub.server.results.reverify_child`'s report says, in one line ('' if not that shape)."""
    graded, total, n_differ = data.get("graded"), data.get("total"), data.get("n_differ")
    if not all(isinstance(x, int) for x in (graded, total, n_differ)):
        return ""
    if state == VERIFIED:
        return f"re-graded {graded} of {total} graded rollouts in the sandbox: every verdict agrees"
    differ = data.get("differ")
    if state == UNVERIFIED and isinstance(differ, list) and differ:
        return f"{n_differ} of {graded} re-graded rollouts differ, e.g. {differ[0]}"
    return ""


def verify_status(state: str, report: str) -> tuple[str, str]:
    """(status shown, reason): pending, verified (with what was checked), unverified with why,
    or error with why."""
    if state not in (PENDING, VERIFIED, UNVERIFIED, VERIFY_ERROR):
        return state, ""
    if state == PENDING or not report.strip():
        return state, ""
    try:
        data = json.loads(report)
    except ValueError:
        return state, "" if state == VERIFIED else report.strip()[:_MAX_REASON]
    if isinstance(data, dict):
        told = _reverify_reason(state, data)
        if told or state == VERIFIED:
            return state, told[:_MAX_REASON]
        for key in _REASON_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return state, value.strip()[:_MAX_REASON]
            if isinstance(value, list) and value:
                return state, "; ".join(str(v) for v in value)[:_MAX_REASON]
    return state, json.dumps(data)[:_MAX_REASON]


def shown_runs(runs: Iterable[Run]) -> list[ShownRun]:
    """The runs as the pages show them (a row whose stored JSON does not parse is left out)."""
    out = []
    for run in runs:
        env = run.version.environment
        ref = f"{env.owner.name}/{env.env_id}"
        try:
            entry = BoardEntry.model_validate_json(run.entry)
            summary = Summary.model_validate_json(run.summary)
        except ValidationError:
            continue
        label = run.label.strip() or entry.label or ""
        entry = entry.model_copy(
            update={
                "id": run.public_id,
                "env_id": ref,
                "owner": run.owner.name,
                "label": label or None,
                "origin": "hub" if run.origin == "hub" else None,
            }
        )
        status, reason = verify_status(run.verify_state, run.verify_report)
        out.append(
            ShownRun(
                public_id=run.public_id,
                ref=ref,
                version=run.version.version,
                pusher=run.owner.name,
                label=label,
                private=run.private,
                pushed_at=run.created_at,
                status=REGRADE_LABELS.get(status, status),
                badge=status,
                reason=reason,
                entry=entry,
                summary=summary,
                band_note=source_note(ENVIRONMENT if stored_tasks_sha(run.verify_report) else ROLLOUTS),
                origin=run.origin,
                endpoint=run.endpoint,
            )
        )
    return out


@dataclass(frozen=True)
class FilterForm:
    """The leaderboard filters as the GET form shows them, and the choices it offers."""

    models: list[str] = field(default_factory=list)
    owner: str = ""
    since: str = ""
    until: str = ""
    compare: bool = False
    errors: list[str] = field(default_factory=list)
    model_choices: list[str] = field(default_factory=list)
    owner_choices: list[str] = field(default_factory=list)
    origin: str = ""  # "hub", "pushed" or "" (both)

    @property
    def active(self) -> bool:
        return bool(self.models or self.owner or self.since or self.until or self.origin)


def origin_param(query: Mapping[str, str]) -> tuple[str, str]:
    """``?origin=hub|pushed`` as (the origin, '') or ('', why it is ignored)."""
    origin = query.get("origin", "").strip()
    if origin in ("", "hub", "pushed"):
        return origin, ""
    return "", f"origin {origin!r} is not hub or pushed; ignored"


def of_origin(runs: Sequence[ShownRun], origin: str) -> list[ShownRun]:
    """The runs of ``origin`` (all of them for '')."""
    return [r for r in runs if not origin or r.origin == origin]


def _day(text: str, *, end: bool) -> float:
    day = dt.date.fromisoformat(text)
    start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
    return (start + dt.timedelta(days=1)).timestamp() - 1e-6 if end else start.timestamp()


def parse_filter(
    query: Mapping[str, str], models: Sequence[str], runs: Sequence[ShownRun]
) -> tuple[RunFilter, FilterForm]:
    """``?model=M&model=N&owner=O&since=YYYY-MM-DD&until=YYYY-MM-DD&origin=hub|pushed&compare=1``
    (``models`` are the repeated ``model`` values). A date or origin that does not parse is
    ignored and said so; the caller keeps the runs of ``form.origin`` (:func:`of_origin`)."""
    chosen = [m for m in models if m.strip()]
    owner = query.get("owner", "").strip()
    dates: dict[str, float | None] = {"since": None, "until": None}
    origin, bad_origin = origin_param(query)
    errors = [bad_origin] if bad_origin else []
    for key in dates:
        text = query.get(key, "").strip()
        if text:
            try:
                dates[key] = _day(text, end=key == "until")
            except ValueError:
                errors.append(f"{key} {text!r} is not a date (YYYY-MM-DD); ignored")
    form = FilterForm(
        models=chosen,
        owner=owner,
        since=query.get("since", "").strip() if dates["since"] is not None else "",
        until=query.get("until", "").strip() if dates["until"] is not None else "",
        compare=query.get("compare", "") in ("1", "on", "yes", "true"),
        errors=errors,
        model_choices=sorted({r.entry.model for r in runs}),
        owner_choices=sorted({r.pusher for r in runs}),
        origin=origin,
    )
    run_filter = RunFilter(
        models=frozenset(chosen),
        owners=frozenset([owner] if owner else []),
        since=dates["since"],
        until=dates["until"],
    )
    return run_filter, form
