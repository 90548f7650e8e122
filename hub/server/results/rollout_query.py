"""Reading a run's stored rollouts a page at a time: filters and sort from plain GET parameters.

:func:`parse_query` reads ``task``, ``status``, ``reward_min``, ``reward_max``, ``sort``, ``page``
and ``per_page`` (at most :data:`MAX_PER_PAGE`), and ``label`` among the values the caller names
(applied by the caller's ``extra``); a value that does not parse is dropped and said so.
:func:`list_rollouts` answers with one page and the number of matches. It first selects the page's
row ids from the indexes of :class:`~hub.server.core.models.RunRollout` (``run_id`` with
``idx``, ``task_id``, ``status`` or ``reward``), then reads those rows without their transcripts,
so a page of a 100,000-rollout run costs two index walks and 50 row reads.

Other tables can narrow the list: ``extra`` is a function given each statement (which selects
from ``rollouts``) that may join and filter it, e.g. on a table keyed by ``(run_id, idx)``.
Visibility is not decided here: callers pass a run :func:`hub.server.core.queries.find_run` gave them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, defer

from hub.server.core import RunRollout
from hub.server.results.rollout_store import STATUSES

__all__ = [
    "DEFAULT_PER_PAGE",
    "MAX_PER_PAGE",
    "SORTS",
    "ExtraFilter",
    "RolloutPage",
    "RolloutQuery",
    "RolloutSummary",
    "find_rollout",
    "list_rollouts",
    "parse_query",
    "task_rollouts",
]

DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 100
#: ``sort`` values and the columns they order by (each served by an index on ``rollouts``).
SORTS: Mapping[str, tuple[Any, ...]] = {
    "idx": (RunRollout.idx,),
    "-idx": (RunRollout.idx.desc(),),
    "reward": (RunRollout.reward, RunRollout.idx),
    "-reward": (RunRollout.reward.desc(), RunRollout.idx.desc()),
    "task": (RunRollout.task_id, RunRollout.rollout_index),
    "-task": (RunRollout.task_id.desc(), RunRollout.rollout_index.desc()),
}

#: Narrows a statement over ``rollouts`` (a join and a filter on another table).
ExtraFilter = Callable[[Select[Any]], Select[Any]]

_SUMMARY_COLUMNS = (
    RunRollout.idx,
    RunRollout.task_id,
    RunRollout.rollout_index,
    RunRollout.status,
    RunRollout.error_kind,
    RunRollout.reward,
    RunRollout.passed,
    RunRollout.grade_status,
    RunRollout.extracted,
    RunRollout.turns,
    RunRollout.n_messages,
    RunRollout.size,
)


@dataclass(frozen=True)
class RolloutQuery:
    """What the rollout list of a run page shows (``page`` counts from 1)."""

    task: str = ""
    status: str = ""
    reward_min: float | None = None
    reward_max: float | None = None
    sort: str = "idx"
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    label: str = ""
    errors: tuple[str, ...] = field(default=(), compare=False)

    @property
    def filtered(self) -> bool:
        return bool(
            self.task
            or self.status
            or self.label
            or self.reward_min is not None
            or self.reward_max is not None
        )

    def params(self, **changes: Any) -> str:
        """This query as a GET query string (``?...``), with ``changes``; defaults left out."""
        q = replace(self, **changes)
        items: list[tuple[str, str]] = []
        if q.task:
            items.append(("task", q.task))
        if q.status:
            items.append(("status", q.status))
        if q.reward_min is not None:
            items.append(("reward_min", f"{q.reward_min:g}"))
        if q.reward_max is not None:
            items.append(("reward_max", f"{q.reward_max:g}"))
        if q.label:
            items.append(("label", q.label))
        if q.sort != "idx":
            items.append(("sort", q.sort))
        if q.per_page != DEFAULT_PER_PAGE:
            items.append(("per_page", str(q.per_page)))
        if q.page != 1:
            items.append(("page", str(q.page)))
        return "?" + urlencode(items)


def _number(text: str, name: str, errors: list[str]) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        errors.append(f"{name} {text[:40]!r} is not a number; ignored")
        return None
    return value


def _count(text: str, name: str, default: int, errors: list[str]) -> int:
    if not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        errors.append(f"{name} {text[:40]!r} is not a whole number; ignored")
        return default
    return value


def parse_query(params: Mapping[str, str], *, labels: tuple[str, ...] = ()) -> RolloutQuery:
    """The query of a run page's GET parameters (``label`` one of ``labels``, else ignored)."""
    errors: list[str] = []
    label = params.get("label", "").strip()
    if label and label not in labels:
        errors.append(f"label {label[:40]!r} is not one of {', '.join(labels) or 'none'}; ignored")
        label = ""
    status = params.get("status", "").strip()
    if status and status not in STATUSES:
        errors.append(f"status {status[:40]!r} is not one of {', '.join(STATUSES)}; ignored")
        status = ""
    sort = params.get("sort", "").strip() or "idx"
    if sort not in SORTS:
        errors.append(f"sort {sort[:40]!r} is not one of {', '.join(SORTS)}; ignored")
        sort = "idx"
    per_page = _count(params.get("per_page", ""), "per_page", DEFAULT_PER_PAGE, errors)
    return RolloutQuery(
        task=params.get("task", "").strip()[:500],
        status=status,
        reward_min=_number(params.get("reward_min", ""), "reward_min", errors),
        reward_max=_number(params.get("reward_max", ""), "reward_max", errors),
        sort=sort,
        page=max(1, _count(params.get("page", ""), "page", 1, errors)),
        per_page=min(MAX_PER_PAGE, max(1, per_page)),
        label=label,
        errors=tuple(errors),
    )


@dataclass(frozen=True)
class RolloutSummary:
    """One rollout as a list shows it (no transcript)."""

    idx: int
    task_id: str
    rollout_index: int
    status: str
    error_kind: str
    reward: float | None
    passed: bool
    grade_status: str
    extracted: str
    turns: int
    n_messages: int
    size: int


@dataclass(frozen=True)
class RolloutPage:
    """One page of a run's rollouts; ``query.page`` is clamped to the last page."""

    rows: list[RolloutSummary]
    total: int
    query: RolloutQuery

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.query.per_page))

    @property
    def first(self) -> int:
        """1-based number of the page's first match (0 when there is none)."""
        return (self.query.page - 1) * self.query.per_page + 1 if self.rows else 0


def _where(stmt: Select[Any], run_id: int, q: RolloutQuery, extra: ExtraFilter | None) -> Select[Any]:
    stmt = stmt.where(RunRollout.run_id == run_id)
    if q.task:
        stmt = stmt.where(RunRollout.task_id == q.task)
    if q.status:
        stmt = stmt.where(RunRollout.status == q.status)
    if q.reward_min is not None:
        stmt = stmt.where(RunRollout.reward >= q.reward_min)
    if q.reward_max is not None:
        stmt = stmt.where(RunRollout.reward <= q.reward_max)
    return extra(stmt) if extra is not None else stmt


def _summaries(rows: Iterable[Any]) -> list[RolloutSummary]:
    return [RolloutSummary(*row) for row in rows]


def list_rollouts(
    session: Session, run_id: int, query: RolloutQuery, *, extra: ExtraFilter | None = None
) -> RolloutPage:
    """One page of run ``run_id``'s rollouts that match ``query`` (and ``extra``)."""
    total = session.scalar(_where(select(func.count()), run_id, query, extra)) or 0
    pages = max(1, -(-total // query.per_page))
    query = replace(query, page=min(query.page, pages))
    ids_stmt = (
        _where(select(RunRollout.id), run_id, query, extra)
        .order_by(*SORTS[query.sort])
        .limit(query.per_page)
        .offset((query.page - 1) * query.per_page)
    )
    ids = list(session.scalars(ids_stmt))
    if not ids:
        return RolloutPage([], total, query)
    found = session.execute(select(RunRollout.id, *_SUMMARY_COLUMNS).where(RunRollout.id.in_(ids))).all()
    order = {row_id: n for n, row_id in enumerate(ids)}
    rows = sorted(found, key=lambda row: order[row[0]])
    return RolloutPage(_summaries(row[1:] for row in rows), total, query)


def find_rollout(
    session: Session, run_id: int, idx: int, *, with_transcript: bool = True
) -> RunRollout | None:
    """Rollout ``idx`` of run ``run_id`` (None if there is none); ``with_transcript=False`` leaves
    the transcript column unread."""
    stmt = select(RunRollout).where(RunRollout.run_id == run_id, RunRollout.idx == idx)
    if not with_transcript:
        stmt = stmt.options(defer(RunRollout.transcript))
    return session.scalars(stmt).first()


def task_rollouts(
    session: Session, run_ids: Iterable[int], task_id: str, *, limit: int = 2000
) -> dict[int, list[RolloutSummary]]:
    """Every stored rollout of ``task_id`` in each of the runs ``run_ids`` (by run id), in rollout
    order, at most ``limit`` in all."""
    ids = list(run_ids)
    out: dict[int, list[RolloutSummary]] = {run_id: [] for run_id in ids}
    if not ids:
        return out
    stmt = (
        select(RunRollout.run_id, *_SUMMARY_COLUMNS)
        .where(RunRollout.run_id.in_(ids), RunRollout.task_id == task_id)
        .order_by(RunRollout.run_id, RunRollout.rollout_index, RunRollout.idx)
        .limit(limit)
    )
    for row in session.execute(stmt):
        out[row[0]].extend(_summaries([row[1:]]))
    return out
