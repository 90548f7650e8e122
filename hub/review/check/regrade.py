"""Grading recorded rollouts again with a package's own grader, sandboxed.

``verify-submission`` uses it to confirm that the rewards in a bundle are the ones the bundled
grader gives (the summary is checked against the rollouts separately, in :mod:`hub.review.submit`).
The package runs in the sandbox exactly as in ``verihub eval --sandbox``; the comparison is made
here, from the grades it answers over the nonce-checked channel, so a package cannot forge it.

A caller that names ``keep_tasks`` (the hub's re-verification: every task id of the pushed run,
not only the sampled ones) gets those of the environment's tasks back in ``RegradeResult.tasks``,
validated as :class:`~hub.env.types.Task` on this side of the channel; they are the package's
output, so treat them as untrusted data.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hub.env import Message, Rollout, Task
from hub.env.aio import within
from hub.review.check.drive import Hung, Prober, run_sync
from hub.review.check.report import CheckReport
from hub.review.check.runner import CheckOptions, require_sandbox, stage_path, stage_wheel, start_checked
from hub.sandbox import STAGE_PREFIX, RemoteEnvironment, RemoteError, SandboxDiedError, make_writable

__all__ = ["RegradeResult", "grade_sandboxed", "regrade_sandboxed", "replay_sandboxed"]


@dataclass
class RegradeResult:
    """``graded`` rollouts were graded again; ``differ`` lists verdicts that changed. ``hung`` names
    the rollout (``task#index``) whose grading stopped the sandbox from answering (then ``error``
    says so too): a response can do that, so a caller may count it as a changed verdict.
    ``tasks`` are the environment's tasks whose ids the caller asked to keep, in the environment's
    order (empty unless asked for, or when the regrade did not finish). ``grades`` is what
    :func:`grade_sandboxed` answers: ``(status, grade or message)`` per rollout; :func:`replay_sandboxed`
    adds the replayed transcript (``messages``) or why it refused to replay (``refused``)."""

    graded: int = 0
    differ: list[str] = field(default_factory=list)
    n_differ: int = 0
    error: str | None = None
    hung: str = ""
    tasks: list[Task] = field(default_factory=list)
    grades: list[tuple[str, Any]] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    refused: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.n_differ == 0


def _recorded_timeout(rec: Rollout) -> bool:
    """Whether the run recorded this rollout as failed because its grading timed out."""
    reason = rec.grade.reason if rec.grade is not None else ""
    return rec.error is None and not rec.passed and not rec.reward and reason.startswith("timeout:")


async def _regrade(
    env: RemoteEnvironment,
    rollouts: Path,
    prober: Prober,
    split: str,
    seed: int,
    n: int,
    keep_tasks: Collection[str] = (),
) -> RegradeResult:
    records = [
        Rollout.model_validate_json(ln)
        for ln in rollouts.read_text(encoding="utf-8").splitlines()
        if ln.strip()
    ]
    keep = set(keep_tasks)
    wanted = {rec.task_id for rec in records} | keep
    tasks: dict[str, Task] = {}
    for t in itertools.islice(env.tasks(split, seed=seed), n):  # stop once every wanted id is found:
        if t.id in wanted:  # a shuffled run's split may be long, and a stream may not end
            tasks[t.id] = t
            if len(tasks) == len(wanted):
                break
    differ: list[str] = []
    graded = 0
    for rec in records:
        if rec.error is not None and rec.error.kind != "grader":
            continue  # the model or the environment failed: nothing to grade
        task = tasks.get(rec.task_id)
        label = f"{rec.task_id}#{rec.rollout_index}"
        if task is None:
            differ.append(f"{label}: not a task of this environment")
            continue
        graded += 1
        base = rec.model_copy(update={"grade": None, "reward": None, "passed": False, "error": None})
        status, grade = await prober.grade_rollout(task, base, label)
        if status == "timeout" and _recorded_timeout(rec):
            continue  # it timed out then and now: the recorded 0 stands (a timeout is a failure)
        if status != "ok":
            if rec.error is None:
                differ.append(f"{label}: recorded reward {rec.reward}, the grader now fails ({status})")
        elif (
            rec.error is not None
            or rec.passed != grade.passed
            or abs((rec.reward or 0.0) - grade.score) > 1e-9
        ):
            differ.append(
                f"{label}: recorded passed={rec.passed} reward={rec.reward}, "
                f"regraded passed={grade.passed} reward={grade.score:g}"
            )
    kept = [t for tid, t in tasks.items() if tid in keep]
    return RegradeResult(graded=graded, differ=differ[:20], n_differ=len(differ), tasks=kept)


def _sandboxed(
    source: Path,
    env_id: str,
    opts: CheckOptions,
    body: Callable[[RemoteEnvironment, Prober], Coroutine[Any, Any, RegradeResult]],
) -> RegradeResult:
    """Stage ``source`` (a built wheel is unpacked; a source folder is built offline in the
    sandbox), start it, and run ``body`` on it; what did not finish is said in ``error``."""
    require_sandbox(opts.unsafe_no_sandbox)
    work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
    try:
        report = CheckReport(target=str(source))
        src = source.resolve()
        stage = (
            stage_wheel(src, work, report) if src.suffix == ".whl" else stage_path(src, work, opts, report)
        )
        if stage is None:
            return RegradeResult(error="the package does not build")
        try:
            env = start_checked(stage, env_id, opts)
        except (RemoteError, SandboxDiedError) as exc:
            return RegradeResult(error=f"the environment does not load: {exc}")
        prober = Prober(env, timeout_s=opts.grade_timeout_s, memory_mb=opts.limits.memory_mb)
        try:
            return run_sync(body(env, prober))
        except Hung as exc:
            return RegradeResult(error=f"regrading did not finish: grading {exc.label} hung", hung=exc.label)
        except (SandboxDiedError, RemoteError) as exc:
            return RegradeResult(error=f"regrading did not finish: {exc}")
        finally:
            env.close()
    finally:
        make_writable(work)
        shutil.rmtree(work, ignore_errors=True)


def regrade_sandboxed(
    source: Path,
    rollouts: Path,
    *,
    env_id: str,
    split: str,
    seed: int,
    num_tasks: int,
    options: CheckOptions | None = None,
    keep_tasks: Collection[str] = (),
) -> RegradeResult:
    """Stage ``source`` and regrade ``rollouts`` with its grader in the sandbox; the environment's
    tasks with an id in ``keep_tasks`` come back in the result."""
    return _sandboxed(
        source,
        env_id,
        options or CheckOptions(),
        lambda env, prober: _regrade(env, rollouts, prober, split, seed, num_tasks, keep_tasks),
    )


async def _grade_new(
    env: RemoteEnvironment, rollouts: Sequence[Rollout], prober: Prober, split: str, seed: int, n: int
) -> RegradeResult:
    wanted = {rec.task_id for rec in rollouts}
    tasks: dict[str, Task] = {}
    for t in itertools.islice(env.tasks(split, seed=seed), n):
        if t.id in wanted:
            tasks[t.id] = t
            if len(tasks) == len(wanted):
                break
    out = RegradeResult()
    for rec in rollouts:
        label = f"{rec.task_id}#{rec.rollout_index}"
        task = tasks.get(rec.task_id)
        if task is None:
            out.grades.append(("error", f"{rec.task_id!r} is not a task of this environment"))
            continue
        base = rec.model_copy(update={"grade": None, "reward": None, "passed": False, "error": None})
        status, grade = await prober.grade_rollout(task, base, label)
        out.graded += status == "ok"
        out.grades.append((status, grade if status == "ok" else (grade or "the grading timed out")))
    return out


def grade_sandboxed(
    source: Path,
    rollouts: Sequence[Rollout],
    *,
    env_id: str,
    split: str,
    seed: int,
    num_tasks: int,
    options: CheckOptions | None = None,
) -> RegradeResult:
    """Grade new ``rollouts`` (e.g. corrected copies) with ``source``'s grader in the sandbox; each
    one's ``(status, grade or message)`` is in ``grades``, in order (status ``ok``, ``timeout``
    or ``error``)."""
    return _sandboxed(
        source,
        env_id,
        options or CheckOptions(),
        lambda env, prober: _grade_new(env, rollouts, prober, split, seed, num_tasks),
    )


async def _find_task(env: RemoteEnvironment, task_id: str, split: str, seed: int, n: int) -> Task | None:
    return next((t for t in itertools.islice(env.tasks(split, seed=seed), n) if t.id == task_id), None)


async def _play(
    env: RemoteEnvironment, task: Task, actions: Sequence[Message], timeout_s: float
) -> tuple[list[Message], str]:
    """The transcript ``env`` makes of ``actions`` (reset, then step on each action, as a run does),
    or why it could not: it ended before the last action, or did not answer in time."""
    try:
        state = await within(env.reset(task), timeout_s)
        for turn, action in enumerate(actions, start=1):
            state.turn = turn
            state.messages.append(action)
            step = await within(env.step(state, action), timeout_s)
            state.messages.extend(step.messages)
            if (step.terminated or step.truncated) and turn < len(actions):
                return (
                    state.messages,
                    f"the environment ended the episode after action {turn} of {len(actions)}",
                )
    except asyncio.TimeoutError:
        return [], f"the environment did not answer within {timeout_s:g}s"
    return state.messages, ""


async def _replay(
    env: RemoteEnvironment,
    prober: Prober,
    original: Rollout,
    actions: Sequence[Message],
    split: str,
    seed: int,
    n: int,
) -> RegradeResult:
    task = await _find_task(env, original.task_id, split, seed, n)
    if task is None:
        return RegradeResult(refused=f"{original.task_id!r} is not a task of this environment")
    timeout_s = prober.timeout_s
    again, why = await _play(env, task, [m for m in original.messages if m.role == "assistant"], timeout_s)
    if why or again != original.messages:
        return RegradeResult(
            refused="the environment is not deterministic: replaying the rollout's own actions "
            + (why or "gives other user or tool turns than the rollout recorded")
        )
    messages, why = await _play(env, task, actions, timeout_s)
    if why:
        return RegradeResult(refused=why)
    completion = next((m.content or "" for m in reversed(messages) if m.role == "assistant"), "")
    copy = original.model_copy(
        update={
            "messages": messages,
            "completion": completion,
            "grade": None,
            "reward": None,
            "passed": False,
            "error": None,
            "turns": len(actions),
        }
    )
    status, grade = await prober.grade_rollout(task, copy, f"{original.task_id}#{original.rollout_index}")
    return RegradeResult(
        graded=int(status == "ok"),
        grades=[(status, grade if status == "ok" else (grade or "the grading timed out"))],
        messages=messages,
    )


def replay_sandboxed(
    source: Path,
    original: Rollout,
    actions: Sequence[Message],
    *,
    env_id: str,
    split: str,
    seed: int,
    num_tasks: int,
    options: CheckOptions | None = None,
) -> RegradeResult:
    """Re-run ``source``'s environment on edited assistant ``actions`` in the sandbox and grade the
    transcript it makes. Refused (``refused``) unless replaying ``original``'s own actions gives
    back exactly its transcript: the environment must be deterministic."""
    return _sandboxed(
        source,
        env_id,
        options or CheckOptions(),
        lambda env, prober: _replay(env, prober, original, actions, split, seed, num_tasks),
    )
