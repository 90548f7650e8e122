"""MATH-500 for verihub: competition problems graded by :mod:`graders.math` (see README.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from graders.pool import WorkerPool
from hub import SingleTurnEnv, Task
from hub.registry.data import load_rows
from hub.registry.math_datasets import PROMPT, math_environment

__all__ = ["DATASET", "ENV_VAR", "PROMPT", "load_environment", "task_from_row"]

DATASET = "HuggingFaceH4/MATH-500"
ENV_VAR = "VERIHUB_MATH500_PATH"


def _task_id(row: Mapping[str, Any], index: int) -> str:
    unique = str(row.get("unique_id") or "")  # "test/precalculus/807.json"
    if unique:
        return "math500-" + unique.removesuffix(".json").replace("/", "-").replace(" ", "_")
    return f"math500-{index:03d}"


def task_from_row(row: Mapping[str, Any], index: int) -> Task:
    """One dataset row as a task; the id comes from MATH's ``unique_id`` (stable across orders)."""
    metadata: dict[str, Any] = {"split": "test"}
    for key in ("subject", "level", "unique_id"):
        if row.get(key) is not None:
            metadata[key] = row[key]
    return Task(
        id=_task_id(row, index),
        prompt=PROMPT.format(problem=row["problem"].strip()),
        answer=str(row["answer"]),
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
    ``VERIHUB_MATH500_PATH`` environment variable, else ``HuggingFaceH4/MATH-500`` from the
    Hugging Face hub). ``strict``: fail unevaluated or unsimplified answers. ``timeout``: seconds
    per check. ``pool``: the worker pool for grading (default: the shared one).
    """
    rows = load_rows(dataset=DATASET, split="test", path=path, env_var=ENV_VAR)
    return math_environment("math500", rows, task_from_row, strict=strict, timeout=timeout, pool=pool)
