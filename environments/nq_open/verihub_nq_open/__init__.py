"""NQ-open: closed-book open-domain question answering for verihub (see README.md)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from graders.qa import EquivalenceOptions, QAGrader
from hub import SingleTurnEnv, Task
from hub.env.errors import UsageError
from hub.registry.data import load_rows

__all__ = ["DATASET", "ENV_VAR", "PROMPT", "load_environment", "make_tasks"]

DATASET = "google-research-datasets/nq_open"
ENV_VAR = "VERIHUB_NQ_OPEN_PATH"
PROMPT = (
    "Answer the question from memory with a short answer (a name, a date, a number or a few "
    "words). Give one answer only, on the last line, as: Answer: <answer>\n\nQuestion: {question}?"
)


def _task_id(question: str) -> str:
    return "nq-" + hashlib.sha1(question.strip().lower().encode("utf-8")).hexdigest()[:12]


def make_tasks(rows: Iterable[Mapping[str, Any]]) -> list[Task]:
    """Tasks from rows with ``question`` and ``answer`` (a list of gold aliases)."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for row in rows:
        question = str(row["question"]).strip()
        answers = row["answer"]
        aliases = [answers] if isinstance(answers, str) else [str(a) for a in answers]
        if not question or not aliases:
            raise UsageError(f"NQ-open row without a question or answers: {dict(row)!r:.200}")
        base = _task_id(question)
        seen[base] = seen.get(base, 0) + 1
        task_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        tasks.append(
            Task(
                id=task_id,
                prompt=PROMPT.format(question=question.rstrip("?")),
                answer=aliases,
                metadata={"question": question, "split": "test"},
            )
        )
    return tasks


def _local_file(path: str | os.PathLike[str]) -> Path:
    """A folder may hold ``validation.jsonl`` (the Hugging Face split name) or ``test.jsonl``."""
    local = Path(path)
    if local.is_dir():
        for name in ("validation.jsonl", "test.jsonl", "validation.parquet", "test.parquet"):
            if (local / name).exists():
                return local / name
    return local


def load_environment(
    *,
    path: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    coarser_dates: bool = False,
) -> SingleTurnEnv:
    """Build the environment.

    ``path``: a local JSONL/JSON/Parquet file (or folder) of ``{"question", "answer"}`` rows;
    defaults to ``$VERIHUB_NQ_OPEN_PATH``, else the Hugging Face dataset's validation split (the
    NQ-open test set). ``limit``: keep the first N questions. ``coarser_dates``: also accept a
    year for a full date (see ``graders.qa.EquivalenceOptions``).
    """
    local = path if path is not None else os.environ.get(ENV_VAR)
    rows = load_rows(
        dataset=DATASET,
        split="validation",
        path=_local_file(local) if local else None,
        env_var=ENV_VAR,
    )
    if limit is not None:
        rows = rows[: max(0, limit)]
    return SingleTurnEnv(
        id="nq_open",
        version="0.1.0",
        tasks={"test": make_tasks(rows)},
        grader=QAGrader(equivalence=EquivalenceOptions(coarser_dates=coarser_dates)),
    )
