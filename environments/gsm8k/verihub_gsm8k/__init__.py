"""GSM8K for verihub: grade-school math word problems, graded by :mod:`graders.math` (see README.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from graders.math import MathGrader, MathOptions
from graders.pool import WorkerPool
from hub import Task
from hub.registry.data import load_rows
from hub.registry.math_datasets import MathEnv

__all__ = ["DATASET", "ENV_VAR", "PROMPT", "load_environment", "reference_answer", "task_from_row"]

DATASET = "openai/gsm8k"
CONFIG = "main"
ENV_VAR = "VERIHUB_GSM8K_PATH"
SPLITS = ("train", "test")
PROMPT = "{question}\n\nPlease reason step by step, and put your final answer within \\boxed{{}}."


def reference_answer(solution: str) -> str:
    """The number after ``####`` in a GSM8K solution, thousands separators removed."""
    if "####" not in solution:
        raise ValueError("a GSM8K answer must end with '#### <number>'")
    return solution.rsplit("####", 1)[1].strip().replace(",", "")


def task_from_row(row: Mapping[str, Any], index: int, split: str = "test") -> Task:
    """One dataset row as a task; ids are ``gsm8k-<split>-<row index>``."""
    return Task(
        id=f"gsm8k-{split}-{index:04d}",
        prompt=PROMPT.format(question=row["question"].strip()),
        answer=reference_answer(row["answer"]),
        metadata={"split": split},
    )


def load_environment(
    *,
    path: str | os.PathLike[str] | None = None,
    split: str = "test",
    strict: bool = True,
    timeout: float = 5.0,
    pool: WorkerPool | None = None,
) -> MathEnv:
    """Build the environment.

    ``path``: a local JSONL file or a folder holding ``<split>.jsonl`` (default: the
    ``VERIHUB_GSM8K_PATH`` environment variable, else ``openai/gsm8k`` from the Hugging Face hub).
    ``strict``: fail unevaluated answers (``\\boxed{37\\cdot43}``). ``timeout``: seconds per
    check. ``pool``: the worker pool for grading (default: the shared one).
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; GSM8K has {SPLITS}")
    rows = load_rows(dataset=DATASET, config=CONFIG, split=split, path=path, env_var=ENV_VAR)
    tasks = [task_from_row(row, i, split) for i, row in enumerate(rows)]
    grader = MathGrader(MathOptions(strict=strict), pool=pool, timeout=timeout)
    return MathEnv(id="gsm8k", version="0.1.0", tasks={split: tasks}, grader=grader)
