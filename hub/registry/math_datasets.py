"""Glue shared by the math environments built on public datasets (MATH-500, AIME, AMC, ...).

A dataset row becomes a :class:`~hub.env.types.Task` whose prompt asks for the final answer in
``\\boxed{}``, and the environment grades with :class:`graders.math.MathGrader`. Contest rows
from the Art of Problem Solving wiki get ids from their problem URL (``aime-2024-I-01``).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graders.math import MathGrader, MathOptions
from graders.pool import WorkerPool
from hub.env import SingleTurnEnv, Task
from hub.registry.data import load_rows

__all__ = [
    "PROMPT",
    "ContestSpec",
    "MathEnv",
    "answer_text",
    "contest_environment",
    "contest_task",
    "math_environment",
]

PROMPT = "{problem}\n\nPlease reason step by step, and put your final answer within \\boxed{{}}."
# ".../2023_AMC_12A_Problems/Problem_11" or ".../2024_AIME_I_Problems/Problem_1"
_URL = re.compile(
    r"(?P<year>\d{4})_(?P<contest>[A-Za-z]+)_(?P<paper>[0-9A-Z]+)_Problems/Problem_(?P<number>\d+)"
)


def answer_text(value: Any) -> str:
    """A reference answer as text: ``27.0`` -> ``"27"``, ``"025"`` stays ``"025"``."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a usable reference answer: {value!r}")
        return str(int(value)) if value.is_integer() else repr(value)
    text = str(value).strip()
    if not text:
        raise ValueError("empty reference answer")
    return text


@dataclass(frozen=True)
class ContestSpec:
    """Where a contest's problems come from."""

    env_id: str
    dataset: str
    hf_split: str
    env_var: str
    year: int


def contest_task(row: Mapping[str, Any], index: int, spec: ContestSpec) -> Task:
    """One contest row as a task; the id comes from the AoPS problem URL (contest, paper, number)."""
    metadata: dict[str, Any] = {"split": "test", "year": spec.year}
    url = str(row.get("url") or "")
    match = _URL.search(url)
    if match is not None:
        task_id = f"{spec.env_id}-{match['year']}-{match['paper']}-{int(match['number']):02d}"
        metadata.update(
            contest=f"{match['contest']} {match['paper']}", problem_number=int(match["number"]), url=url
        )
    else:
        task_id = f"{spec.env_id}-{spec.year}-{row.get('id', index)}"
    for key in ("subject", "level"):
        if row.get(key) is not None:
            metadata[key] = row[key]
    problem = row.get("problem") or row.get("question")
    if not problem:
        raise ValueError(f"row {index} has no 'problem' or 'question' field")
    return Task(
        id=task_id,
        prompt=PROMPT.format(problem=str(problem).strip()),
        answer=answer_text(row["answer"]),
        metadata=metadata,
    )


class MathEnv(SingleTurnEnv):
    """A single-turn math environment: answers are written as the prompt asks, in ``\\boxed{}``."""

    def render_answer(self, answer: str) -> str:
        """How a model commits to ``answer`` (the form the prompt asks for)."""
        return f"The final answer is $\\boxed{{{answer}}}$."


def math_environment(
    env_id: str,
    rows: list[dict[str, Any]],
    to_task: Callable[[Mapping[str, Any], int], Task],
    *,
    strict: bool,
    timeout: float,
    pool: WorkerPool | None,
    version: str = "0.1.0",
) -> MathEnv:
    """A single-turn environment over ``rows`` graded by :class:`~graders.math.MathGrader`."""
    tasks = [to_task(row, i) for i, row in enumerate(rows)]
    grader = MathGrader(MathOptions(strict=strict), pool=pool, timeout=timeout)
    return MathEnv(id=env_id, version=version, tasks={"test": tasks}, grader=grader)


def contest_environment(
    spec: ContestSpec,
    *,
    path: str | os.PathLike[str] | None,
    strict: bool,
    timeout: float,
    pool: WorkerPool | None,
) -> MathEnv:
    """A contest environment: a local file (``path`` or ``spec.env_var``) or the HF dataset."""
    local = path if path is not None else os.environ.get(spec.env_var) or None
    rows = load_rows(
        dataset=spec.dataset, split="test" if local else spec.hf_split, path=local, env_var=spec.env_var
    )
    return math_environment(
        spec.env_id,
        rows,
        lambda row, i: contest_task(row, i, spec),
        strict=strict,
        timeout=timeout,
        pool=pool,
    )
