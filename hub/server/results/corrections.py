"""Corrected trajectories: a labeller's edited copy of a rollout, graded by the version's grader.

A correction changes only the text of assistant turns (:func:`corrected_rollout` refuses anything
else, naming the turn). With ``rerun_step`` the request's assistant turns are actions that the
environment is re-run on in the sandbox, its transcript the correction; that is refused (422,
nothing stored) unless the environment is deterministic (replaying the rollout's own actions
gives back its recorded transcript).

The copy is graded in the request by the version's own wheel in the sandbox, in a child process
(:mod:`hub.server.results.correction_child`) with the worker children's allow-listed environment
and a time limit (:data:`TIMEOUT_S`); the grading is injectable (:data:`Grader`). The correction
is stored with its grade (or why there is none), parent rollout, author and time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from hub.env import Message, Rollout
from hub.sandbox import Limits as SandboxLimits
from hub.server.accounts import Principal
from hub.server.core import CHILD_ENV, Correction, Problem, Run, Storage
from hub.server.results.labels import MAX_NOTE, LabelError, target

__all__ = [
    "GRADED",
    "TIMEOUT_S",
    "GradeJob",
    "Grader",
    "SandboxGrader",
    "correct_rollout",
    "correction_json",
    "corrected_rollout",
    "corrections_of",
    "grade_plan",
    "plan_correction",
    "store_correction",
    "Plan",
]

GRADED, GRADE_ERROR = "graded", "error"
#: The longest one grading of a correction may take, start-up of the sandbox included (seconds).
TIMEOUT_S = SandboxLimits().wall_s + 60.0


@dataclass(frozen=True)
class GradeJob:
    """What grading a corrected copy needs: the run's archive, the version's wheel, the copy."""

    archive: Path
    wheel: Path
    wheel_name: str
    rollout: Rollout
    #: With ``rerun_step``: the rollout corrected (``rollout``'s assistant turns are the actions).
    original: Rollout | None = None

    @property
    def actions(self) -> list[Message]:
        return [m for m in self.rollout.messages if m.role == "assistant"]


#: Grades a :class:`GradeJob`: ``{"state": "graded"|"error", "grade": dict|None, "error": str}``.
Grader = Callable[[GradeJob], dict[str, Any]]


class SandboxGrader:
    """The default :data:`Grader`: a child process grading in the sandbox, killed past ``timeout_s``."""

    def __init__(self, timeout_s: float = TIMEOUT_S, environ: Mapping[str, str] | None = None) -> None:
        self.timeout_s = timeout_s
        source = os.environ if environ is None else environ
        self.env = {k: source[k] for k in CHILD_ENV if k in source}

    def __call__(self, job: GradeJob) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="verihub-correct-") as tmp:
            rollout, out = Path(tmp) / "rollout.json", Path(tmp) / "outcome.json"
            cmd = [sys.executable, "-m", "hub.server.results.correction_child"]
            cmd += [str(job.archive), str(job.wheel), job.wheel_name, str(rollout), str(out)]
            if job.original is None:
                rollout.write_text(job.rollout.model_dump_json(), encoding="utf-8")
            else:
                payload = {
                    "original": job.original.model_dump(mode="json"),
                    "actions": [m.model_dump(mode="json") for m in job.actions],
                }
                rollout.write_text(json.dumps(payload), encoding="utf-8")
                cmd.append("--rerun")
            try:
                subprocess.run(cmd, env=self.env, capture_output=True, timeout=self.timeout_s, check=False)
            except subprocess.TimeoutExpired:
                return {
                    "state": GRADE_ERROR,
                    "grade": None,
                    "error": f"grading took longer than {self.timeout_s:g}s",
                }
            if not out.is_file():
                return {"state": GRADE_ERROR, "grade": None, "error": "the grading process failed"}
            outcome: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
            return outcome


def _refuse(message: str) -> LabelError:
    return LabelError(message, Problem.UNPROCESSABLE)


def _messages(raw: Any) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise LabelError('give the corrected transcript as "messages": a list of chat messages')
    try:
        return [Message.model_validate(m) for m in raw]
    except ValidationError as exc:
        raise LabelError(f"messages: {exc.errors()[0]['msg']}") from None


def corrected_rollout(original: Rollout, raw_messages: Any, *, rerun_step: bool = False) -> Rollout:
    """The corrected copy of ``original`` with the edited ``raw_messages``, or a refusal (422)
    naming the first turn that may not change. With ``rerun_step`` only the assistant turns
    count (the actions the environment will be re-run on)."""
    if rerun_step:
        edited = _messages(raw_messages)
        actions = [m for m in edited if m.role == "assistant"]
        if not actions:
            raise _refuse("re-running the environment needs at least one assistant turn (an action)")
        if actions == [m for m in original.messages if m.role == "assistant"]:
            raise _refuse("the correction has the same actions as the rollout; edit an assistant turn")
        return original.model_copy(
            update={"messages": edited, "reward": None, "passed": False, "grade": None}
        )
    edited = _messages(raw_messages)
    before = original.messages
    if len(edited) != len(before):
        raise _refuse(
            f"the correction has {len(edited)} turns, the rollout {len(before)}: adding or removing turns "
            "would need the environment to answer them; edit the assistant turns in place"
        )
    changed = False
    for i, (old, new) in enumerate(zip(before, edited, strict=True)):
        if new.role != old.role:
            raise _refuse(f"turn {i} is a {old.role} turn; the correction makes it {new.role}")
        if old.role != "assistant":
            if new != old:
                raise _refuse(f"turn {i} is a {old.role} turn: only assistant turns may be edited")
            continue
        if (new.tool_calls or None) != (old.tool_calls or None):
            raise _refuse(
                f"turn {i} changes a tool call: the environment would have to answer it again; "
                "edit only the text of assistant turns"
            )
        changed = changed or new.content != old.content
    if not changed:
        raise _refuse("the correction is the same transcript as the rollout; edit an assistant turn")
    completion = next((m.content or "" for m in reversed(edited) if m.role == "assistant"), "")
    return original.model_copy(
        update={
            "messages": edited,
            "completion": completion,
            "reward": None,
            "passed": False,
            "grade": None,
            "error": None,
            "extra": {},
        }
    )


@dataclass(frozen=True)
class Plan:
    """A checked correction waiting for its grade: the corrected copy, its note, and the grading
    job (None when the version has no wheel to grade with)."""

    run_id: int
    index: int
    copy: Rollout
    note: str
    job: GradeJob | None
    rerun: bool = False


def plan_correction(
    storage: Storage, run: Run, index: int, original: Rollout, body: Mapping[str, Any]
) -> Plan:
    """Check a correction of rollout ``index`` of ``run`` (``who`` was checked with
    :func:`hub.server.results.labels.target`); refusals are 400 or 422."""
    note = body.get("note", "")
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise LabelError(f"note must be text of at most {MAX_NOTE} characters")
    rerun = body.get("rerun_step", False)
    if not isinstance(rerun, bool):
        raise LabelError("rerun_step must be true or false")
    copy = corrected_rollout(original, body.get("messages"), rerun_step=rerun)
    wheel = next((f for f in run.version.files if f.kind == "wheel"), None)
    job = None
    if wheel is not None and storage.exists(wheel.sha256) and storage.exists(run.archive_sha256):
        archive, wheel_path = storage.path(run.archive_sha256), storage.path(wheel.sha256)
        job = GradeJob(archive, wheel_path, wheel.filename, copy, original if rerun else None)
    elif rerun:
        raise _refuse("the environment cannot be re-run: its version has no wheel on this hub")
    return Plan(run.id, index, copy, note, job, rerun)


def grade_plan(plan: Plan, grader: Grader) -> dict[str, Any]:
    """The grading outcome of ``plan`` (run it outside any database transaction: it takes seconds)."""
    if plan.job is None:
        return {"state": GRADE_ERROR, "grade": None, "error": "the version has no wheel to grade with"}
    return grader(plan.job)


def store_correction(session: Session, who: Principal, plan: Plan, outcome: Mapping[str, Any]) -> Correction:
    """Store the graded correction under ``who``; a re-run the child refused, or one that made no
    transcript, is refused here (422) and nothing is stored."""
    if outcome.get("refused"):
        raise _refuse(f"the environment was not re-run on the edited actions: {outcome['refused']}")
    messages = plan.copy.messages
    if plan.rerun:
        made = outcome.get("messages")
        if not isinstance(made, list) or not made:
            raise _refuse(f"the environment could not be re-run: {outcome.get('error') or 'no transcript'}")
        messages = [Message.model_validate(m) for m in made]
    grade = outcome.get("grade") if outcome.get("state") == GRADED else None
    ok = isinstance(grade, dict)
    row = Correction(
        run_id=plan.run_id,
        rollout=plan.index,
        author_id=who.user_id,
        messages=json.dumps([m.model_dump(mode="json", exclude_none=True) for m in messages]),
        rerun=plan.rerun,
        note=plan.note,
        state=GRADED if ok else GRADE_ERROR,
        reward=float(grade["score"]) if isinstance(grade, dict) else None,
        passed=bool(grade["passed"]) if isinstance(grade, dict) else False,
        grade=json.dumps(grade) if ok else "",
        error="" if ok else str(outcome.get("error") or "no grade")[:2000],
    )
    session.add(row)
    session.flush()
    return row


def correct_rollout(
    sessions: sessionmaker[Session],
    storage: Storage,
    who: Principal,
    public_id: str,
    index: int,
    body: Mapping[str, Any],
    grader: Grader,
) -> dict[str, Any]:
    """Check, grade and store a correction of rollout ``index`` of run ``public_id`` by ``who``
    (what the API and the rollout page's form both call): the checks of :func:`target` and
    :func:`plan_correction`, the grading outside any transaction, then :func:`store_correction`.
    Answers the stored correction as :func:`correction_json`."""
    with sessions() as session:
        run, rollout = target(session, storage, who, public_id, index, write=True)
        plan = plan_correction(storage, run, index, rollout, body)
    outcome = grade_plan(plan, grader)
    with sessions() as session, session.begin():
        return correction_json(store_correction(session, who, plan, outcome))


def corrections_of(session: Session, runs: list[Run], index: int | None = None) -> list[Correction]:
    """The corrections of ``runs`` (of one rollout with ``index``), oldest first."""
    if not runs:
        return []
    stmt = select(Correction).where(Correction.run_id.in_([r.id for r in runs]))
    if index is not None:
        stmt = stmt.where(Correction.rollout == index)
    return list(session.scalars(stmt.order_by(Correction.id)))


def correction_json(row: Correction) -> dict[str, Any]:
    return {
        "id": row.id,
        "run": row.run.public_id,
        "rollout": row.rollout,
        "author": row.author.name,
        "created_at": row.created_at.isoformat() + "Z",
        "note": row.note,
        "messages": json.loads(row.messages),
        "state": row.state,
        "reward": row.reward,
        "passed": row.passed,
        "grade": json.loads(row.grade) if row.grade else None,
        "error": row.error,
        "rerun": row.rerun,
    }
