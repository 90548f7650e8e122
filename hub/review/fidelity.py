"""A grader's measured error rates against labelled responses: the verifier card.

A label file holds JSON lines ``{"task_id" or "prompt", "response", "reference"?, "label"}``
(``label``: the response is correct). :func:`read_labels` reads and checks it, refusing malformed
lines by number; :func:`measure` grades every response with the environment's own ``grade`` (as
a run does) and gives accuracy, false-positive and false-negative rates, each with a Wilson 95%
interval. A ``grader_failed`` verdict counts as a fail and is counted apart; an ``error`` grade
is no verdict, left out of the rates.

A line is graded against its ``task_id``, else the task whose prompt text is exactly its
``prompt``, else a task made of the prompt and its ``reference``; a split generated without end
is searched in its first :data:`GENERATED_TASKS` tasks. Label files and cards: docs/graders.md,
"Verifier cards".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hub.env import Environment, Message, Rollout, Task, Timing, UsageError, grade_rollout, wilson_interval

__all__ = [
    "GENERATED_TASKS",
    "ConfusionExample",
    "FidelityReport",
    "LabelledResponse",
    "Rate",
    "measure",
    "parse_labels",
    "rate",
    "read_labels",
    "report_from_verdicts",
]

_SHOWN_LINES = 5
GENERATED_TASKS = 1000
"""How many tasks of a split without end (seed 0) label lines may name by id or prompt."""
_EXAMPLE_CHARS = 400


class LabelledResponse(BaseModel):
    """One line of a label file."""

    line: int = Field(description="1-based line number in the file.")
    task_id: str | None = None
    prompt: str | None = None
    response: str
    reference: Any = None
    label: bool = Field(description="True when the response is correct.")


class Rate(BaseModel):
    """``k`` out of ``n`` with its Wilson 95% interval (``value`` None when n is 0)."""

    k: int
    n: int
    value: float | None
    ci95: tuple[float, float]

    def text(self) -> str:
        if self.value is None:
            return "- (0 of 0)"
        low, high = self.ci95
        return f"{100 * self.value:.2f}% [{100 * low:.2f}, {100 * high:.2f}] ({self.k}/{self.n})"


def rate(k: int, n: int) -> Rate:
    """``k`` of ``n`` as a :class:`Rate`."""
    return Rate(k=k, n=n, value=k / n if n else None, ci95=wilson_interval(k, n))


class ConfusionExample(BaseModel):
    """A line where the grader and the label disagree."""

    kind: str = Field(
        description="false_positive (wrong answer rewarded) or false_negative (right answer refused)."
    )
    line: int
    task_id: str
    response: str = Field(description="The response, cut to a few hundred characters.")
    reference: Any = None
    reason: str = Field(default="", description="The grade's reason.")


class FidelityReport(BaseModel):
    """The verifier card of one environment on one label file."""

    env_id: str
    env_version: str
    labels: str = Field(description="The label file measured.")
    labels_sha256: str = Field(default="", description="The label file's sha256, when known.")
    n: int = Field(description="Lines with a verdict (errors excluded).")
    true_positive: int
    false_negative: int
    false_positive: int
    true_negative: int
    accuracy: Rate
    false_positive_rate: Rate = Field(description="Graded pass among lines labelled false.")
    false_negative_rate: Rate = Field(description="Graded fail among lines labelled true.")
    grader_failed: int = Field(description="Verdicts that were grader failures (counted as fails).")
    errors: int = Field(description="Lines whose grading failed for infrastructure reasons (no verdict).")
    examples: list[ConfusionExample] = Field(default_factory=list)

    def to_text(self) -> str:
        """The card as a few lines of text."""
        return "\n".join(
            [
                f"{self.env_id} {self.env_version}: {self.n} labelled responses from {self.labels}",
                f"  labelled correct {self.true_positive + self.false_negative}, "
                f"labelled wrong {self.false_positive + self.true_negative}",
                f"  accuracy            {self.accuracy.text()}",
                f"  false-positive rate {self.false_positive_rate.text()}  wrong answers rewarded",
                f"  false-negative rate {self.false_negative_rate.text()}  right answers refused",
                f"  confusion: TP {self.true_positive}  FN {self.false_negative}  "
                f"FP {self.false_positive}  TN {self.true_negative}",
                f"  grader_failed {self.grader_failed}  errors (no verdict) {self.errors}",
                *(
                    f"  {e.kind} line {e.line} ({e.task_id}): {e.response!r} vs {e.reference!r}"
                    + (f" [{e.reason}]" if e.reason else "")
                    for e in self.examples
                ),
            ]
        )


def _some(lines: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:_SHOWN_LINES])
    return shown + (f" and {len(lines) - _SHOWN_LINES} more" if len(lines) > _SHOWN_LINES else "")


def _parse_line(text: str, number: int) -> LabelledResponse | str:
    """One line as a record, or why it is malformed."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    if not isinstance(row, dict):
        return "not a JSON object"
    task_id, prompt, response, label = (row.get(k) for k in ("task_id", "prompt", "response", "label"))
    if task_id is None and prompt is None:
        return "needs task_id or prompt"
    if task_id is not None and not isinstance(task_id, str):
        return "task_id must be a string"
    if prompt is not None and not isinstance(prompt, str):
        return "prompt must be a string"
    if not isinstance(response, str):
        return "response must be a string"
    if not isinstance(label, bool):
        return "label must be true or false"
    return LabelledResponse(
        line=number,
        task_id=task_id,
        prompt=prompt,
        response=response,
        reference=row.get("reference"),
        label=label,
    )


def parse_labels(lines: Iterable[str], source: str) -> list[LabelledResponse]:
    """The records of a label file's lines; blank lines are skipped, malformed ones refused
    (UsageError naming ``source`` and the line numbers)."""
    out: list[LabelledResponse] = []
    bad: list[tuple[int, str]] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        parsed = _parse_line(text, number)
        if isinstance(parsed, str):
            bad.append((number, parsed))
        else:
            out.append(parsed)
    if bad:
        first_line, first_why = bad[0]
        raise UsageError(
            f"{source}: {len(bad)} malformed line(s) ({_some([n for n, _ in bad])}); line {first_line}: "
            f"{first_why}; each line must be a JSON object with task_id or prompt, response, label"
        )
    if not out:
        raise UsageError(f"{source} holds no labelled responses")
    return out


def read_labels(path: str | Path) -> list[LabelledResponse]:
    """The records of a label file (see :func:`parse_labels`)."""
    source = Path(path)
    if not source.is_file():
        raise UsageError(f"label file {str(source)!r} not found: pass --labels FILE (JSON lines)")
    with source.open(encoding="utf-8", errors="replace") as handle:
        return parse_labels(handle, str(source))


def _prompt_text(task: Task) -> str:
    if isinstance(task.prompt, str):
        return task.prompt
    return next((m.content or "" for m in reversed(task.prompt) if m.role == "user"), "")


def _task_index(env: Environment) -> tuple[dict[str, Task], dict[str, Task]]:
    """The environment's tasks of every split (the first :data:`GENERATED_TASKS` of one
    generated without end), by id and by prompt text (first wins)."""
    by_id: dict[str, Task] = {}
    by_prompt: dict[str, Task] = {}
    for split in env.splits:
        listed: Iterable[Task] = env.tasks(split)
        if env.num_tasks(split) is None:
            listed = islice(listed, GENERATED_TASKS)
        for task in listed:
            by_id.setdefault(task.id, task)
            by_prompt.setdefault(_prompt_text(task), task)
    return by_id, by_prompt


def _resolve(env: Environment, labels: Sequence[LabelledResponse]) -> list[Task]:
    """Each line's task, or a UsageError naming the lines no task matches."""
    by_id, by_prompt = _task_index(env)
    tasks: list[Task] = []
    unknown: list[int] = []
    for item in labels:
        task = by_id.get(item.task_id) if item.task_id is not None else None
        if task is None and item.prompt is not None:
            task = by_prompt.get(item.prompt)
            if task is None and item.reference is not None:
                task = Task(id=item.task_id or f"line-{item.line}", prompt=item.prompt, answer=item.reference)
        if task is None:
            unknown.append(item.line)
            continue
        if item.reference is not None and task.answer != item.reference:
            task = task.model_copy(update={"answer": item.reference})
        tasks.append(task)
    if unknown:
        first = labels[[i.line for i in labels].index(unknown[0])]
        what = f"task id {first.task_id!r}" if first.task_id is not None else "its prompt"
        raise UsageError(
            f"{len(unknown)} label line(s) match no task of {env.id} ({_some(unknown)}; line {unknown[0]}: "
            f"{what}); check the file was made for this environment and its data (--env-arg path=...), "
            "or give prompt and reference"
        )
    return tasks


async def _grade_all(
    env: Environment,
    tasks: Sequence[Task],
    labels: Sequence[LabelledResponse],
    *,
    concurrency: int,
    timeout_s: float,
) -> list[tuple[bool | None, bool, str]]:
    """(passed or None for an error, grader_failed, reason) per line, in order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task, item: LabelledResponse) -> tuple[bool | None, bool, str]:
        rollout = Rollout(
            task_id=task.id,
            rollout_index=0,
            messages=[*task.messages(env.system_prompt), Message(role="assistant", content=item.response)],
            completion=item.response,
            timing=Timing(started_at=0.0),
            turns=1,
        )
        async with gate:
            grade = await grade_rollout(env, task, rollout, timeout_s=timeout_s)
        if grade.is_error:
            return None, False, grade.reason or grade.status
        return grade.passed, grade.grader_failed, grade.reason or ""

    return list(await asyncio.gather(*(one(t, i) for t, i in zip(tasks, labels, strict=True))))


def report_from_verdicts(
    env: Environment,
    source: str,
    labels: Sequence[LabelledResponse],
    tasks: Sequence[Task],
    verdicts: Iterable[tuple[bool | None, bool, str]],
    *,
    examples: int = 5,
) -> FidelityReport:
    """Count the confusion matrix and the rates; keep up to ``examples`` of each disagreement."""
    tp = fn = fp = tn = failed = errors = 0
    shown: dict[str, list[ConfusionExample]] = {"false_positive": [], "false_negative": []}
    for item, task, (passed, grader_failed, reason) in zip(labels, tasks, verdicts, strict=True):
        if passed is None:
            errors += 1
            continue
        failed += grader_failed
        if item.label and passed:
            tp += 1
        elif item.label:
            fn += 1
        elif passed:
            fp += 1
        else:
            tn += 1
        if passed != item.label:
            kind = "false_positive" if passed else "false_negative"
            if len(shown[kind]) < examples:
                shown[kind].append(
                    ConfusionExample(
                        kind=kind,
                        line=item.line,
                        task_id=task.id,
                        response=item.response[:_EXAMPLE_CHARS],
                        reference=task.answer,
                        reason=reason[:_EXAMPLE_CHARS],
                    )
                )
    n = tp + fn + fp + tn
    return FidelityReport(
        env_id=env.id,
        env_version=env.version,
        labels=source,
        n=n,
        true_positive=tp,
        false_negative=fn,
        false_positive=fp,
        true_negative=tn,
        accuracy=rate(tp + tn, n),
        false_positive_rate=rate(fp, fp + tn),
        false_negative_rate=rate(fn, tp + fn),
        grader_failed=failed,
        errors=errors,
        examples=shown["false_positive"] + shown["false_negative"],
    )


async def measure(
    env: Environment,
    labels: Sequence[LabelledResponse],
    *,
    source: str = "",
    examples: int = 5,
    concurrency: int = 8,
    timeout_s: float = 30.0,
) -> FidelityReport:
    """Grade every labelled response with ``env``'s own grader and compare with the labels."""
    tasks = _resolve(env, labels)
    verdicts = await _grade_all(env, tasks, labels, concurrency=concurrency, timeout_s=timeout_s)
    return report_from_verdicts(env, source, labels, tasks, verdicts, examples=examples)
