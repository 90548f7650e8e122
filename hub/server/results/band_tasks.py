"""The tasks of a run's band export: the environment's own, listed by re-verification, or else the
prompts of the pushed rollouts.

The hub never runs an environment's code outside the sandbox. The re-verification child
(:mod:`hub.server.results.reverify_child`) asks the sandboxed environment for its tasks while it regrades,
keeps those whose id is one of the run's, and writes them as JSON lines (:func:`dump_tasks`, at
most :data:`MAX_TASKS_BYTES`); the worker stores that file as a blob and records its hash as
``tasks_sha256`` in the run's ``verify_report`` (:func:`stored_tasks_sha`).
:func:`band_tasks` reads it back for the band export, again as untrusted data: every line must
validate as :class:`~hub.env.Task` and name a task of the run, anything else is dropped. Without
it the tasks are rebuilt from the rollouts (:func:`tasks_from_archive`): id and opening
messages, ``answer`` and ``metadata`` unknown.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from hub.env import Message, Rollout, Task

__all__ = [
    "ENVIRONMENT",
    "MAX_TASKS_BYTES",
    "ROLLOUTS",
    "BandSource",
    "band_tasks",
    "dump_tasks",
    "load_tasks",
    "source_note",
    "stored_tasks_sha",
    "tasks_from_archive",
]

#: The largest tasks file the re-verification stores (bigger: not stored, and the report says so).
MAX_TASKS_BYTES = 32 << 20
_MAX_ROLLOUTS_BYTES = 512 << 20
_HEX = re.compile(r"^[0-9a-f]{64}$")

#: Where a band export's tasks come from.
BandSource = Literal["environment", "rollouts"]
ENVIRONMENT: BandSource = "environment"
ROLLOUTS: BandSource = "rollouts"


def source_note(source: BandSource) -> str:
    """What a page says about the tasks of a band export from ``source``."""
    if source == ENVIRONMENT:
        return "tasks from the environment (re-verification)"
    return "prompts from the pushed rollouts; answers unknown until the run is re-verified"


def dump_tasks(tasks: Iterable[Task], keep: Collection[str], *, cap: int = MAX_TASKS_BYTES) -> bytes | None:
    """JSON lines of the tasks whose id is in ``keep`` (the first of each id) that read back as a
    :class:`Task` (any other is left out); None when they come to more than ``cap`` bytes."""
    lines: list[bytes] = []
    size = 0
    seen: set[str] = set()
    for task in tasks:
        if task.id not in keep or task.id in seen:
            continue
        try:
            line = task.model_dump_json().encode("utf-8") + b"\n"
            Task.model_validate_json(line)  # what the export reads back
        except ValueError:  # pydantic's errors are ValueErrors: such a task is left out
            continue
        seen.add(task.id)
        size += len(line)
        if size > cap:
            return None
        lines.append(line)
    return b"".join(lines)


def load_tasks(data: bytes, keep: Collection[str]) -> list[Task]:
    """The tasks in ``data`` (JSON lines) whose id is in ``keep``; a line that is no
    :class:`Task`, or repeats an id, is dropped."""
    out: dict[str, Task] = {}
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            task = Task.model_validate_json(line)
        except ValidationError:
            continue
        if task.id in keep and task.id not in out:
            out[task.id] = task
    return list(out.values())


def stored_tasks_sha(report: str) -> str | None:
    """The ``tasks_sha256`` a run's ``verify_report`` records, or None (none, or not a sha256)."""
    try:
        data = json.loads(report) if report.strip() else None
    except ValueError:
        return None
    sha = data.get("tasks_sha256") if isinstance(data, dict) else None
    return sha if isinstance(sha, str) and _HEX.match(sha) else None


def _opening(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The messages before the model's first answer: the task's prompt as the run sent it."""
    out = []
    for m in messages:
        if m.role == "assistant":
            break
        out.append(m)
    return tuple(out)


def tasks_from_archive(archive: Path) -> list[Task] | str:
    """The tasks of a pushed run as its rollouts recorded them (id and opening messages; the hub
    never runs an environment's code, so ``answer`` and ``metadata`` are unknown), or why not."""
    from hub.server.core import Limits
    from hub.server.results.runpack import unpack_run

    with tempfile.TemporaryDirectory(prefix="verihub-band-") as tmp:
        try:
            run = unpack_run(archive, Path(tmp) / "run", Limits())  # the reader that took the push
            rollouts = run / "rollouts.jsonl"
            if rollouts.stat().st_size > _MAX_ROLLOUTS_BYTES:
                return "the stored rollouts are too large to read here"
            prompts: dict[str, tuple[Message, ...]] = {}
            with rollouts.open("rb") as fh:
                for line in fh:
                    if line.strip():
                        r = Rollout.model_validate_json(line)
                        if r.task_id not in prompts or r.rollout_index == 0:
                            prompts[r.task_id] = _opening(r.messages)
        except (OSError, ValueError) as exc:  # ArchiveError and ValidationError are ValueErrors
            return f"the stored run cannot be read ({type(exc).__name__})"
    return [Task(id=tid, prompt=msgs) for tid, msgs in prompts.items()]


def band_tasks(archive: Path, stored: Path | None) -> tuple[list[Task], BandSource] | str:
    """The tasks of a run's band export and where they come from: the stored environment tasks
    (``stored``, the blob of ``tasks_sha256``) limited to the run's task ids when that file is
    there and holds any, else the rollouts' prompts; or why there are none."""
    prompts = tasks_from_archive(archive)
    if isinstance(prompts, str):
        return prompts
    if stored is not None:
        try:
            with stored.open("rb") as fh:
                data = fh.read(MAX_TASKS_BYTES + 1)
        except OSError:
            data = b""
        if len(data) <= MAX_TASKS_BYTES:
            tasks = load_tasks(data, {t.id for t in prompts})
            if tasks:
                return tasks, ENVIRONMENT
    return prompts, ROLLOUTS
