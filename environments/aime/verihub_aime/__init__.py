"""AIME 2024 for verihub: contest problems with numeric answers, graded by :mod:`graders.math`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from graders.pool import WorkerPool
from hub import SingleTurnEnv, Task
from hub.registry.math_datasets import PROMPT, ContestSpec, answer_text, contest_environment, contest_task

__all__ = ["DATASET", "ENV_VAR", "PROMPT", "SPEC", "load_environment", "reference_answer", "task_from_row"]

DATASET = "HuggingFaceH4/aime_2024"
ENV_VAR = "VERIHUB_AIME_PATH"
SPEC = ContestSpec(env_id="aime", dataset=DATASET, hf_split="train", env_var=ENV_VAR, year=2024)
"""The Hugging Face split holding the problems is ``train``; the environment calls it ``test``."""
reference_answer = answer_text


def task_from_row(row: Mapping[str, Any], index: int) -> Task:
    """One dataset row as a task (id from the AoPS problem URL)."""
    return contest_task(row, index, SPEC)


def load_environment(
    *,
    path: str | os.PathLike[str] | None = None,
    strict: bool = True,
    timeout: float = 5.0,
    pool: WorkerPool | None = None,
) -> SingleTurnEnv:
    """Build the environment.

    ``path``: a local JSONL file or a folder holding ``test.jsonl`` (default: the
    ``VERIHUB_AIME_PATH`` environment variable, else ``HuggingFaceH4/aime_2024`` from the Hugging Face hub).
    ``strict``: fail unevaluated answers. ``timeout``: seconds per check. ``pool``: the worker
    pool for grading (default: the shared one).
    """
    return contest_environment(SPEC, path=path, strict=strict, timeout=timeout, pool=pool)
