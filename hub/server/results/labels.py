"""People's labels on the rollouts of pushed runs, and what they measure.

A label says whether a rollout's response is ``correct``, ``incorrect``, a ``reward_hack`` (graded
well, but not a real solution) or ``unclear``, with a note. Labels are never edited: a newer one
on the same rollout supersedes the older for display, and every label stays as the history.

Who may label (:func:`may_label`): a user with the reviewer role, an admin, or someone who may
publish as the environment's owner (its user, its organisation's members), with a push token or
stronger. A run the requester cannot see is "not found", like one that does not exist.

View helpers for pages: :func:`current_labels` (the shown label of each rollout),
:func:`label_counts` and :func:`agreement` (the grader's verdicts against the labels, with a
Wilson 95% interval). :func:`label_file` is the file ``verihub fidelity`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from hub.env import Rollout, Task
from hub.review import Rate, rate
from hub.server.accounts import Principal, can_publish_as
from hub.server.core import (
    Environment,
    HubProblem,
    Owner,
    Problem,
    RolloutLabel,
    Run,
    RunRollout,
    Storage,
    Version,
    find_run,
    visible_runs,
)
from hub.server.results.band_tasks import load_tasks, stored_tasks_sha
from hub.server.results.rollout_archive import rollout_lines, rollout_of

__all__ = [
    "LABELS",
    "MAX_NOTE",
    "Agreement",
    "LabelCounts",
    "LabelError",
    "add_label",
    "agreement",
    "current_labels",
    "dumps_lines",
    "label_counts",
    "label_counts_many",
    "label_file",
    "label_json",
    "label_rollout",
    "may_label",
    "opening_prompt",
    "rollout_labels",
    "target",
]

#: The values a label may take, in the order pages list them.
LABELS = ("correct", "incorrect", "reward_hack", "unclear")
#: What each value says to ``verihub fidelity`` (None: left out of the label file).
_FIDELITY: dict[str, bool | None] = {
    "correct": True,
    "incorrect": False,
    "reward_hack": False,
    "unclear": None,
}
#: The longest note kept (characters).
MAX_NOTE = 4000


class LabelError(HubProblem):
    """A label (or a correction) was refused."""


def may_label(session: Session, who: Principal, env: Environment) -> bool:
    """Whether ``who`` may label (and correct) rollouts of ``env``'s runs."""
    if not who.allows("push"):
        return False
    user = session.get(Owner, who.user_id)
    if user is not None and (user.is_reviewer or user.is_admin):
        return True
    return can_publish_as(session, who, env.owner)


def target(
    session: Session, storage: Storage, who: Principal | None, public_id: str, index: int, *, write: bool
) -> tuple[Run, Rollout]:
    """The run and rollout addressed, checked for ``who`` (404 when unseen or absent; 403 when
    ``write`` and ``who`` may not label)."""
    run = find_run(session, who, public_id)
    if run is None:
        raise LabelError("no such run", Problem.NOT_FOUND)
    rollout = rollout_of(storage, run, index)
    if rollout is None:
        raise LabelError(f"run {public_id} has no rollout {index}", Problem.NOT_FOUND)
    if write:
        if who is None or not may_label(session, who, run.version.environment):
            raise LabelError(
                "only reviewers, the environment's owners and admins may label or correct rollouts "
                "(with a push token or stronger)",
                Problem.FORBIDDEN,
            )
    return run, rollout


def add_label(
    session: Session, who: Principal, run: Run, index: int, value: str, note: str = ""
) -> RolloutLabel:
    """Record a new label (the caller checked ``who`` with :func:`target`); it supersedes the older."""
    if value not in LABELS:
        raise LabelError(f"a label is one of {', '.join(LABELS)}, not {value!r}")
    if len(note) > MAX_NOTE:
        raise LabelError(f"the note is {len(note)} characters; at most {MAX_NOTE}", Problem.TOO_LARGE)
    row = RolloutLabel(run_id=run.id, rollout=index, value=value, note=note, author_id=who.user_id)
    session.add(row)
    session.flush()
    return row


def label_rollout(
    session: Session, storage: Storage, who: Principal, public_id: str, index: int, value: str, note: str = ""
) -> RolloutLabel:
    """Check ``who`` on the rollout (:func:`target`) and record the label: what the API and the
    rollout page's form both call."""
    run, _ = target(session, storage, who, public_id, index, write=True)
    return add_label(session, who, run, index, value, note)


def label_json(row: RolloutLabel) -> dict[str, Any]:
    return {
        "id": row.id,
        "run": row.run.public_id,
        "rollout": row.rollout,
        "value": row.value,
        "note": row.note,
        "author": row.author.name,
        "created_at": row.created_at.isoformat() + "Z",
    }


def rollout_labels(session: Session, run: Run, index: int) -> list[RolloutLabel]:
    """Every label of one rollout, newest first (the first is the one shown)."""
    stmt = (
        select(RolloutLabel)
        .where(RolloutLabel.run_id == run.id, RolloutLabel.rollout == index)
        .order_by(RolloutLabel.id.desc())
    )
    return list(session.scalars(stmt))


def current_labels(
    session: Session, runs: Sequence[Run], indexes: Iterable[int] | None = None
) -> dict[tuple[int, int], RolloutLabel]:
    """The shown (newest) label of every labelled rollout of ``runs``, by (run id, rollout index);
    with ``indexes``, of those rollouts only (a page's rows, in one query)."""
    if not runs:
        return {}
    stmt = select(RolloutLabel).where(RolloutLabel.run_id.in_([r.id for r in runs]))
    if indexes is not None:
        stmt = stmt.where(RolloutLabel.rollout.in_(sorted(set(indexes))))
    return {(row.run_id, row.rollout): row for row in session.scalars(stmt.order_by(RolloutLabel.id))}


@dataclass(frozen=True)
class LabelCounts:
    """How many rollouts of a run carry a label, and of each value (shown labels only)."""

    rollouts: int
    labelled: int
    by_value: dict[str, int] = field(default_factory=dict)


def _n_rollouts(run: Run) -> int:
    n = json.loads(run.summary).get("n_rollouts")
    return n if isinstance(n, int) else 0


def _shown_values(session: Session, runs: Sequence[Run]) -> dict[tuple[int, int], str]:
    """The shown label's value of every labelled rollout of ``runs`` (plain rows, no objects)."""
    if not runs:
        return {}
    cols = (RolloutLabel.run_id, RolloutLabel.rollout, RolloutLabel.value)
    rows = session.execute(select(*cols).where(RolloutLabel.id.in_(_newest(runs))))
    return {(run_id, index): value for run_id, index, value in rows}


def label_counts_many(session: Session, runs: Sequence[Run]) -> dict[int, LabelCounts]:
    """:class:`LabelCounts` of each of ``runs`` by run id, in one grouped query (for lists of runs
    and cards); the rollout count is the run's recorded summary's, so no archive is read."""
    out = {
        r.id: LabelCounts(rollouts=_n_rollouts(r), labelled=0, by_value={v: 0 for v in LABELS}) for r in runs
    }
    if not runs:
        return out
    stmt = (
        select(RolloutLabel.run_id, RolloutLabel.value, func.count())
        .where(RolloutLabel.id.in_(_newest(runs)))
        .group_by(RolloutLabel.run_id, RolloutLabel.value)
    )
    for run_id, value, count in session.execute(stmt):
        counts = out[run_id]
        counts.by_value[value] = counts.by_value.get(value, 0) + count
        out[run_id] = LabelCounts(counts.rollouts, counts.labelled + count, counts.by_value)
    return out


def label_counts(session: Session, run: Run) -> LabelCounts:
    """How many of ``run``'s rollouts carry a label, and of each value."""
    return label_counts_many(session, [run])[run.id]


@dataclass(frozen=True)
class Agreement:
    """The grader's verdicts against the labels: ``rate`` is agreements out of the rollouts with a
    verdict and a decisive label (``unclear`` and errored rollouts left out); ``false_pass`` counts
    rollouts graded passed but labelled incorrect or reward_hack, ``false_fail`` those graded failed
    but labelled correct."""

    rate: Rate
    false_pass: int
    false_fail: int


def agreement(session: Session, storage: Storage, runs: Sequence[Run]) -> Agreement:
    """Agreement between the recorded grades and the shown labels over ``runs`` (one run or several,
    e.g. every run of a version for a card)."""
    k = n = false_pass = false_fail = 0
    for value, passed, count in _tally(session, storage, runs):
        truth = _FIDELITY.get(value)
        if truth is None or passed is None:
            continue  # unclear, or no verdict to compare
        n += count
        if passed == truth:
            k += count
        elif passed:
            false_pass += count
        else:
            false_fail += count
    return Agreement(rate=rate(k, n), false_pass=false_pass, false_fail=false_fail)


def _has_verdict(reward: float | None, error_kind: str | None) -> bool:
    """Whether a rollout was graded: a reward, and no error but the grader's own."""
    return reward is not None and error_kind in (None, "", "grader")


def _newest(runs: Sequence[Run]) -> Select[Any]:
    """The ids of the shown labels of ``runs``."""
    return (
        select(func.max(RolloutLabel.id))
        .where(RolloutLabel.run_id.in_([r.id for r in runs]))
        .group_by(RolloutLabel.run_id, RolloutLabel.rollout)
    )


def _tally(session: Session, storage: Storage, runs: Sequence[Run]) -> list[tuple[str, bool | None, int]]:
    """``(shown label value, whether the rollout passed or None without a verdict, how many)``.
    Runs whose rollouts are stored as rows are counted in the database (a few grouped rows however
    many labels); the others from their archives."""
    out: list[tuple[str, bool | None, int]] = []
    stored = [r for r in runs if r.rollouts_stored]
    if stored:
        keys = (RolloutLabel.value, RunRollout.reward.is_(None), RunRollout.error_kind, RunRollout.passed)
        stmt = (
            select(*keys, func.count())
            .join(
                RunRollout,
                (RunRollout.run_id == RolloutLabel.run_id) & (RunRollout.idx == RolloutLabel.rollout),
            )
            .where(RolloutLabel.id.in_(_newest(stored)))
            .group_by(*keys)
        )
        for value, no_reward, kind, passed, count in session.execute(stmt):
            graded = _has_verdict(None if no_reward else 0.0, kind)
            out.append((value, bool(passed) if graded else None, count))
    others = [r for r in runs if not r.rollouts_stored]
    shown = _shown_values(session, others)
    for run in others:
        lines = rollout_lines(storage, run)
        for (run_id, index), value in shown.items():
            if run_id != run.id or not 0 <= index < len(lines):
                continue
            rec = Rollout.model_validate_json(lines[index])
            graded = _has_verdict(rec.reward, rec.error.kind if rec.error is not None else None)
            out.append((value, rec.passed if graded else None, 1))
    return out


def _references(storage: Storage, run: Run, task_ids: Iterable[str]) -> dict[str, Any]:
    """The reference answers of the run's tasks that re-verification listed (none before it ran)."""
    sha = stored_tasks_sha(run.verify_report)
    if sha is None or not storage.exists(sha):
        return {}
    tasks: list[Task] = load_tasks(storage.path(sha).read_bytes(), set(task_ids))
    return {t.id: t.answer for t in tasks if t.answer is not None}


def opening_prompt(rollout: Rollout) -> str:
    """The text of the last user turn before the rollout's first reply: the task's prompt, which
    ``verihub fidelity`` matches when the environment cannot list the task by id (generated)."""
    text = ""
    for message in rollout.messages:
        if message.role == "assistant":
            break
        if message.role == "user" and isinstance(message.content, str):
            text = message.content
    return text


def label_file(
    session: Session, storage: Storage, who: Principal | None, version: Version
) -> list[dict[str, Any]]:
    """The label file of ``version`` as ``who`` may see it: one line per labelled rollout of a
    visible run whose shown label is decisive (``unclear`` is left out), in the format of
    ``verihub fidelity`` (``task_id``, ``prompt``, ``response``, ``reference`` when known, ``label``) with the
    rollout's provenance beside it."""
    runs = visible_runs(session, who, version=version)
    shown = current_labels(session, runs)
    out: list[dict[str, Any]] = []
    for run in runs:
        mine = sorted((index, row) for (run_id, index), row in shown.items() if run_id == run.id)
        picked = [(index, row) for index, row in mine if _FIDELITY.get(row.value) is not None]
        if not picked:
            continue
        lines = rollout_lines(storage, run)
        records = {
            index: Rollout.model_validate_json(lines[index]) for index, _ in picked if index < len(lines)
        }
        refs = _references(storage, run, {r.task_id for r in records.values()})
        for index, row in picked:
            rec = records.get(index)
            if rec is None:
                continue
            line: dict[str, Any] = {
                "task_id": rec.task_id,
                "prompt": opening_prompt(rec),
                "response": rec.completion,
                "label": _FIDELITY[row.value],
            }
            if rec.task_id in refs:
                line["reference"] = refs[rec.task_id]
            line.update(
                run=run.public_id,
                rollout=index,
                value=row.value,
                note=row.note,
                author=row.author.name,
                labelled_at=row.created_at.isoformat() + "Z",
                graded_passed=rec.passed,
            )
            out.append(line)
    return out


def dumps_lines(lines: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
