"""Grading one rollout with an environment's own grader, and choosing the tasks of a split.

These are the environment-side primitives that the runner (:mod:`hub.run.runner`), the RL reward
(:mod:`hub.train.rewards`) and the Ray graders build on: :func:`grade_rollout` enforces the grading
time limit (a grader that raises gives a counted ``grader_failed`` grade, never an error that a
response could hide behind; a grade that runs past the limit is the response's failure, an
incorrect grade that counts as 0),
:func:`with_grade` attaches a grade to a rollout, and :class:`TaskSelection` iterates the first N
tasks of a split without holding them.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import json
import random
import time
from collections.abc import Generator, Iterable, Iterator
from types import CoroutineType
from typing import TYPE_CHECKING, Any

from graders.grade import Grade
from graders.total import grade_of_exception
from hub.env.aio import within
from hub.env.errors import EnvironmentGoneError, UsageError
from hub.env.types import Rollout, RolloutError, Task, Timing

if TYPE_CHECKING:
    from hub.env.environment import Environment

__all__ = [
    "KEEP_TASK_BYTES",
    "TaskSelection",
    "grade_rollout",
    "one_line",
    "select_tasks",
    "task_json",
    "with_grade",
    "with_metrics",
]

KEEP_TASK_BYTES = 8 << 20
"""A selection whose tasks hash to at most this many bytes of JSON is kept after its hash."""

_TASK_JSON = json.JSONEncoder(sort_keys=True, default=repr)
"""The encoding of a task in the selection's hash: ``json.dumps(..., sort_keys=True, default=repr)``."""
_C_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_ENCODE_CHUNKS: Any = (
    _C_MAKE_ENCODER(None, repr, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True)
    if _C_MAKE_ENCODER is not None
    else None
)
"""The C encoder ``_TASK_JSON.encode`` builds on every call, built once (no circular-reference
check: a task is validated data, and a cycle would fail its validation first)."""
_SCALARS = frozenset({str, int, float, bool, type(None)})


def task_json(task: Task) -> bytes:
    """``task`` as one line of the selection's hash: the same bytes as ``json.dumps(task.model_dump(
    mode="python"), sort_keys=True, default=repr)``, built without the dump when the task is plain
    (a text prompt, a scalar answer, scalar metadata: the usual task, where the dump changes nothing)."""
    prompt, answer, metadata = task.prompt, task.answer, task.metadata
    if (
        type(prompt) is str
        and type(answer) in _SCALARS
        and all(type(k) is str and type(v) in _SCALARS for k, v in metadata.items())
    ):
        data: dict[str, Any] = {"id": task.id, "prompt": prompt, "answer": answer, "metadata": metadata}
    else:
        data = task.model_dump(mode="python")
    if _ENCODE_CHUNKS is None:
        return _TASK_JSON.encode(data).encode()
    return "".join(_ENCODE_CHUNKS(data, 0)).encode()


class TaskSelection:
    """The first ``num_tasks`` tasks of a split (or, with ``shuffle``, a seeded random sample of
    ``num_tasks`` of a finite split, in split order), generated again on each iteration.

    A run iterates its tasks instead of holding them, so memory does not grow with the number of
    tasks (a procedural environment can serve 100,000 of them). Only a small selection is kept:
    when :meth:`sha256` has walked tasks of at most :data:`KEEP_TASK_BYTES` (as hashed), later
    iterations give those same tasks instead of generating them again.
    """

    def __init__(
        self, env: Environment, *, split: str, seed: int, num_tasks: int | None, shuffle: bool = False
    ) -> None:
        if num_tasks is not None and num_tasks < 1:
            raise UsageError("--num-tasks must be at least 1")
        total = env.num_tasks(split)
        if num_tasks is None and total is None:
            raise UsageError(f"{env.id} generates tasks without end; pass --num-tasks N")
        if shuffle and total is None:
            raise UsageError(
                f"{env.id} generates its tasks in a seeded random order already; drop --shuffle "
                "(--seed picks another sample)"
            )
        self.env = env
        self.split = split
        self.seed = seed
        self.num_tasks = num_tasks
        self.shuffle = shuffle
        self._kept: list[Task] | None = None

    def __iter__(self) -> Iterator[Task]:
        if self._kept is not None:
            return iter(self._kept)
        source: Iterable[Task] = self.env.tasks(self.split, seed=self.seed)
        if self.num_tasks is None:
            return iter(source)
        if self.shuffle:
            total = self.env.num_tasks(self.split) or 0
            if self.num_tasks < total:
                picked = set(
                    random.Random(f"verihub-shuffle:{self.seed}").sample(range(total), self.num_tasks)
                )
                return (t for i, t in enumerate(source) if i in picked)
        return itertools.islice(source, self.num_tasks)

    def sha256(self) -> str:
        """A hash of the selected tasks (ids, prompts, answers, metadata), in order."""
        digest = hashlib.sha256()
        kept: list[Task] | None = [] if self._kept is None else None
        size = 0
        for task in self:
            line = task_json(task)
            digest.update(line)
            digest.update(b"\n")
            if kept is not None:
                size += len(line)
                kept.append(task)
                if size > KEEP_TASK_BYTES:
                    kept = None  # too large to hold: each iteration generates them again
        if kept is not None:
            self._kept = kept
        return "sha256:" + digest.hexdigest()

    def count(self) -> int:
        """How many tasks the selection holds (counted without keeping them)."""
        total = self.env.num_tasks(self.split)
        if total is not None:
            return total if self.num_tasks is None else min(total, self.num_tasks)
        return sum(1 for _ in self)


def select_tasks(
    env: Environment, *, split: str, seed: int, num_tasks: int | None, shuffle: bool = False
) -> list[Task]:
    """The first ``num_tasks`` tasks of ``split`` (all of a finite split when None; a seeded
    random sample with ``shuffle``), as a list."""
    return list(TaskSelection(env, split=split, seed=seed, num_tasks=num_tasks, shuffle=shuffle))


async def grade_rollout(env: Environment, task: Task, rollout: Rollout, *, timeout_s: float) -> Grade:
    """Grade with a time limit; a grader that raises gives :func:`graders.total.grade_of_exception`.

    Running past the limit is charged to the response, not the grader: an ``incorrect`` grade
    whose reason starts with ``timeout:`` (score 0, counted in means and pass@k), so a policy
    cannot raise its mean by answering with expressions that time grading out. A grader that
    raises on the response gives ``incorrect`` with reason ``grader_failed: ...`` (counted in
    means, and apart as a grader failure), never an error a crafted response could hide behind.
    Failures of the grading infrastructure (a judge endpoint down, a crashed pool, a missing
    program) come back as ``error`` grades and are counted apart.

    The limit is enforced on the record even when it cannot interrupt: a grader that blocks the
    event loop (synchronous CPU work, ``time.sleep``) cannot be cancelled, so the time it held
    the loop is measured, and past ``timeout_s`` the grade is recorded as a timeout whatever it
    said. Blocking or possibly hanging work belongs in a worker pool with a parent-side kill
    (:class:`hub.env.pooled.PooledGrade`, :mod:`graders.pool`).

    A grade that finishes without suspending (a pure, synchronous check) runs inline; one that
    waits (a pool, a judge) goes on under :func:`hub.env.aio.within` (a limit that never swallows
    the rollout's own cancellation).
    """
    try:
        pending = env.grade(task, rollout)
        if type(pending) is not CoroutineType and not inspect.isawaitable(pending):
            return Grade.error(
                f"{type(env).__name__}.grade returned {type(pending).__name__}, not an awaitable; "
                "declare it `async def grade`"
            )
        steps: Any = pending.__await__()  # send/throw/close, like a coroutine
        start = time.perf_counter()
        try:
            first = steps.send(None)
        except StopIteration as stop:  # done without suspending: nothing a timer could interrupt
            held_s = time.perf_counter() - start
            grade = stop.value
        else:  # it waits on something (a pool, a judge): the limit is enforced by a timer
            meter = _LoopMeter(time.perf_counter() - start)
            grade = await within(_resumed(_Stepped(steps, first, meter)), timeout_s)
            held_s = meter.held_s
    except asyncio.TimeoutError:
        # a grade that outlives its limit is the response's doing (timeout bait): a counted 0,
        # never an error that summaries would leave out; infrastructure failures arrive as errors
        return Grade.incorrect(reason=f"timeout: grader exceeded {timeout_s:g}s on this response")
    except (asyncio.CancelledError, EnvironmentGoneError):
        raise  # a dead sandbox ends the run instead of failing every later rollout
    except Exception as exc:  # a grader bug must not end the run, nor pay the response
        return grade_of_exception(exc)
    if held_s > timeout_s:
        return Grade.incorrect(
            reason=f"timeout: grader blocked the event loop for {held_s:.2f}s "
            f"(limit {timeout_s:g}s), so it could not be interrupted; "
            "run blocking work in graders.pool (see hub.env.pooled.PooledGrade)"
        )
    if not isinstance(grade, Grade):
        return Grade.error(f"grader returned {type(grade).__name__}, not a Grade")
    return grade


async def _resumed(rest: _Stepped) -> Any:
    """The rest of a grade whose first step has run, as a coroutine (what
    :func:`hub.env.aio.within` cancels at the limit)."""
    return await rest


class _LoopMeter:
    """Measures how long a coroutine holds the event loop: the sum of its synchronous steps.

    Time spent suspended (awaiting I/O, a worker pool, a sleep) is not counted; time spent
    computing between two awaits is, because nothing else can run meanwhile.
    """

    def __init__(self, held_s: float = 0.0) -> None:
        self.held_s = held_s


class _Stepped:
    """``await _Stepped(steps, first, meter)`` yields ``first`` (what the first step of ``steps``
    yielded), then drives ``steps`` to its end, adding the time of each step to ``meter``."""

    def __init__(self, steps: Generator[Any, Any, Any], first: Any, meter: _LoopMeter) -> None:
        self._steps = steps
        self._first = first
        self._meter = meter

    def __await__(self) -> Generator[Any, Any, Any]:
        steps, meter, yielded = self._steps, self._meter, self._first
        while True:
            error: BaseException | None = None
            value: Any = None
            try:
                value = yield yielded
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # cancellation at the limit goes on into the grader
                error = exc
            start = time.perf_counter()
            try:
                yielded = steps.send(value) if error is None else steps.throw(error)
            except StopIteration as stop:
                return stop.value
            finally:
                meter.held_s += time.perf_counter() - start


def with_grade(rollout: Rollout, grade: Grade, grade_s: float, *, in_place: bool = False) -> Rollout:
    """The rollout with its grade attached (errors recorded as grader errors).

    ``grade_s`` replaces any earlier grading time (a regrade), in ``grade_s`` and in ``total_s``.
    ``in_place``: fill in ``rollout`` itself (and its timing) and return it, instead of a copy;
    for a caller that built the rollout and holds the only use of it (the runner).
    """
    old = rollout.timing
    total_s = old.total_s - old.grade_s + grade_s
    if grade.is_error:
        fields: dict[str, Any] = {
            "grade": grade,
            "reward": None,
            "passed": False,
            "error": RolloutError(kind="grader", message=grade.reason or grade.status),
        }
    else:
        fields = {"grade": grade, "reward": grade.score, "passed": grade.passed, "error": None}
    if in_place:  # what model_copy(update=...) does to its copy, done to the rollout itself
        old.__dict__.update(grade_s=grade_s, total_s=total_s)
        old.__pydantic_fields_set__.update(("grade_s", "total_s"))
        rollout.__dict__.update(fields)
        rollout.__pydantic_fields_set__.update(fields)
        return rollout
    fields["timing"] = Timing(  # built, not copied: one validation is cheaper than a model_copy
        started_at=old.started_at, model_s=old.model_s, env_s=old.env_s, grade_s=grade_s, total_s=total_s
    )
    return rollout.model_copy(update=fields)


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (at most 500 characters), for one-line records."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:500]


def with_metrics(env: Environment, task: Task, rollout: Rollout) -> Rollout:
    """The graded rollout with the environment's metrics in ``extra.metrics`` (see
    :meth:`hub.env.environment.Environment.metrics`); an error rollout contributes none. A metric
    function that fails is recorded in ``extra.metrics_error`` instead of ending the run."""
    extra = rollout.extra
    if "metrics" in extra or "metrics_error" in extra:
        extra = {k: v for k, v in extra.items() if k not in ("metrics", "metrics_error")}
    if rollout.error is not None:
        return rollout if extra is rollout.extra else rollout.model_copy(update={"extra": extra})
    try:
        declared = env.metrics(task, rollout)
        if not declared and extra is rollout.extra:  # no metrics, none to drop: the usual case
            return rollout
        values = {str(name): [float(num), float(den)] for name, (num, den) in dict(declared).items()}
    except Exception as exc:  # a metric bug must not end the run or hide the grade
        added: dict[str, Any] = {"metrics_error": f"{type(exc).__name__}: {one_line(exc)}"}
    else:
        added = {"metrics": values} if values else {}
    extra = {**extra, **added}
    return rollout if extra == rollout.extra else rollout.model_copy(update={"extra": extra})
