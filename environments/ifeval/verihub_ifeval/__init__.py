"""IFEval: verifiable instruction following for verihub (see README.md)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from graders.ifeval import CHECKERS, IFEvalGrader, check
from hub import Rollout, SingleTurnEnv, Task
from hub.env.errors import UsageError
from hub.registry.data import load_rows

__all__ = ["DATASET", "ENV_VAR", "METRICS", "IFEvalEnv", "load_environment", "make_tasks"]

DATASET = "google/IFEval"
ENV_VAR = "VERIHUB_IFEVAL_PATH"


def make_tasks(rows: Iterable[Mapping[str, Any]]) -> list[Task]:
    """Tasks from IFEval rows (``key``, ``prompt``, ``instruction_id_list``, ``kwargs``).

    The task's answer is the grader's reference: ``{instruction_id_list, kwargs, prompt}``, with
    the ``None`` placeholders of the Hugging Face copy dropped from each kwargs mapping.
    """
    tasks: list[Task] = []
    for row in rows:
        ids = [str(i) for i in row["instruction_id_list"]]
        unknown = [i for i in ids if i not in CHECKERS]
        if unknown or len(ids) != len(row["kwargs"]):
            raise UsageError(
                f"IFEval row {row.get('key')!r}: unknown instructions {unknown} or kwargs mismatch"
            )
        kwargs = [{k: v for k, v in (kw or {}).items() if v is not None} for kw in row["kwargs"]]
        tasks.append(
            Task(
                id=f"ifeval-{row['key']}",
                prompt=str(row["prompt"]),
                answer={"instruction_id_list": ids, "kwargs": kwargs, "prompt": str(row["prompt"])},
                metadata={"instructions": ids, "split": "test"},
            )
        )
    return tasks


METRICS = (
    "prompt_level_strict_acc",
    "inst_level_strict_acc",
    "prompt_level_loose_acc",
    "inst_level_loose_acc",
)
"""The four numbers IFEval (and lm-evaluation-harness) report, under lm-eval's names."""


class IFEvalEnv(SingleTurnEnv):
    """IFEval as a single-turn environment that reports IFEval's four standard numbers."""

    def metrics(self, task: Task, rollout: Rollout) -> Mapping[str, tuple[float, float]]:
        """Prompt level: all instructions followed (per prompt); instruction level: instructions
        followed out of all instructions; each strict and loose, as lm-eval computes them."""
        reference = task.answer
        verdict = check(
            rollout.completion,
            instruction_id_list=list(reference["instruction_id_list"]),
            kwargs=list(reference["kwargs"]),
            prompt=str(reference.get("prompt", "")),
        )
        n = float(len(verdict.strict))
        return {
            "prompt_level_strict_acc": (float(verdict.prompt_strict), 1.0),
            "inst_level_strict_acc": (float(sum(verdict.strict)), n),
            "prompt_level_loose_acc": (float(verdict.prompt_loose), 1.0),
            "inst_level_loose_acc": (float(sum(verdict.loose)), n),
        }


def _local_file(path: str | os.PathLike[str]) -> Path:
    """A folder may hold ``train.jsonl`` (the Hugging Face split name) or ``input_data.jsonl``."""
    local = Path(path)
    if local.is_dir():
        for name in ("train.jsonl", "input_data.jsonl", "train.parquet"):
            if (local / name).exists():
                return local / name
    return local


def load_environment(
    *, path: str | os.PathLike[str] | None = None, limit: int | None = None
) -> SingleTurnEnv:
    """Build the environment.

    ``path``: a local IFEval file (JSONL/JSON/Parquet, e.g. the official ``input_data.jsonl``) or
    a folder holding one; defaults to ``$VERIHUB_IFEVAL_PATH``, else Hugging Face ``google/IFEval``
    (its only split, ``train``, exposed here as ``test``). ``limit``: keep the first N prompts.
    Reward: the fraction of instructions followed (strict); passed: all followed. A run's
    summary also reports IFEval's four numbers (:data:`METRICS`), comparable with lm-eval's.
    """
    local = path if path is not None else os.environ.get(ENV_VAR)
    rows = load_rows(
        dataset=DATASET, split="train", path=_local_file(local) if local else None, env_var=ENV_VAR
    )
    if limit is not None:
        rows = rows[: max(0, limit)]
    return IFEvalEnv(id="ifeval", version="0.1.0", tasks={"test": make_tasks(rows)}, grader=IFEvalGrader())
