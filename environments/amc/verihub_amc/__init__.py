"""AMC 2023 for verihub: contest problems with numeric answers, graded by :mod:`graders.math`."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any

from graders.math import MathGrader, MathOptions
from graders.pool import WorkerPool
from hub import SingleTurnEnv, Task
from hub.data import load_rows

__all__ = ["DATASET", "ENV_VAR", "PROMPT", "load_environment", "reference_answer", "task_from_row"]

DATASET = "math-ai/amc23"
HF_SPLIT = "test"
"""The split of the Hugging Face dataset holding the problems (the environment calls it ``test``)."""
ENV_VAR = "VERIHUB_AMC_PATH"
YEAR = 2023
PROMPT = "{problem}\n\nPlease reason step by step, and put your final answer within \\boxed{{}}."
# ".../2023_AMC_12A_Problems/Problem_11" or ".../2024_AIME_I_Problems/Problem_1"
_URL = re.compile(
    r"(?P<year>\d{4})_(?P<contest>[A-Za-z]+)_(?P<paper>[0-9A-Z]+)_Problems/Problem_(?P<number>\d+)"
)


def reference_answer(value: Any) -> str:
    """The reference answer as text: ``27.0`` -> ``"27"``, ``"025"`` stays ``"025"``."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a usable reference answer: {value!r}")
        return str(int(value)) if value.is_integer() else repr(value)
    text = str(value).strip()
    if not text:
        raise ValueError("empty reference answer")
    return text


def task_from_row(row: Mapping[str, Any], index: int) -> Task:
    """One dataset row as a task; the id comes from the AoPS problem URL (contest, paper, number)."""
    metadata: dict[str, Any] = {"split": "test", "year": YEAR}
    url = str(row.get("url") or "")
    match = _URL.search(url)
    if match is not None:
        task_id = f"amc-{match['year']}-{match['paper']}-{int(match['number']):02d}"
        metadata.update(
            contest=f"{match['contest']} {match['paper']}", problem_number=int(match["number"]), url=url
        )
    else:
        task_id = f"amc-{YEAR}-{row.get('id', index)}"
    for key in ("subject", "level"):
        if row.get(key) is not None:
            metadata[key] = row[key]
    problem = row.get("problem") or row.get("question")
    if not problem:
        raise ValueError(f"row {index} has no 'problem' or 'question' field")
    return Task(
        id=task_id,
        prompt=PROMPT.format(problem=str(problem).strip()),
        answer=reference_answer(row["answer"]),
        metadata=metadata,
    )


def load_environment(
    *,
    path: str | os.PathLike[str] | None = None,
    strict: bool = True,
    timeout: float = 5.0,
    pool: WorkerPool | None = None,
) -> SingleTurnEnv:
    """Build the environment.

    ``path``: a local JSONL file or a folder holding ``test.jsonl`` (default: the
    ``VERIHUB_AMC_PATH`` environment variable, else ``math-ai/amc23`` from the Hugging Face hub).
    ``strict``: fail unevaluated answers. ``timeout``: seconds per check. ``pool``: the worker
    pool for grading (default: the shared one).
    """
    local = path if path is not None else os.environ.get(ENV_VAR) or None
    split = "test" if local else HF_SPLIT
    rows = load_rows(dataset=DATASET, split=split, path=local)
    tasks = [task_from_row(row, i) for i, row in enumerate(rows)]
    grader = MathGrader(MathOptions(strict=strict), pool=pool, timeout=timeout)
    return SingleTurnEnv(id="amc", version="0.1.0", tasks={"test": tasks}, grader=grader)
