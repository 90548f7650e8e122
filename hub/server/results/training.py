"""The reviewed training data of an environment version: its labelled rollouts and corrections.

:func:`training_records` is what ``verihub export --sft --hub OWNER/ID@VERSION`` downloads: for
every run of the version the requester may see, each rollout with a shown label and each graded
correction, as an SFT record (``messages``, ``task_id``, ``rollout_index``, ``reward``,
``passed``) with its ``label``, ``corrected`` flag, the pass rate of its task over those runs
(``task_pass_rate``) and its ``provenance``: run, rollout, environment, version and content
hash, and the label's or the correction's author (a correction's ``label`` is None: the label
of the rollout it corrects is its ``provenance.parent_label``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from sqlalchemy.orm import Session

from hub.env import Message, Rollout
from hub.server.accounts import Principal
from hub.server.core import Run, Storage, Version, visible_runs
from hub.server.results.corrections import GRADED, corrections_of
from hub.server.results.labels import current_labels
from hub.server.results.rollout_archive import rollout_lines

__all__ = ["training_records"]


def _message(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if v is not None}
    out.setdefault("content", "")
    return out


def _provenance(run: Run, version: Version, index: int) -> dict[str, Any]:
    env = version.environment
    return {
        "source": "hub",
        "run": run.public_id,
        "rollout": index,
        "environment": f"{env.owner.name}/{env.env_id}",
        "env_version": version.version,
        "env_hash": version.content_hash,
        "model": run.model,
    }


def training_records(
    session: Session, storage: Storage, who: Principal | None, version: Version
) -> list[dict[str, Any]]:
    """The labelled rollouts and graded corrections of ``version`` that ``who`` may see."""
    runs = visible_runs(session, who, version=version)
    shown = current_labels(session, runs)
    fixes = corrections_of(session, runs)
    passes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    parsed: dict[tuple[int, int], Rollout] = {}
    wanted = set(shown) | {(c.run_id, c.rollout) for c in fixes}
    for run in runs:
        for index, line in enumerate(rollout_lines(storage, run)):
            item = Rollout.model_validate_json(line)
            if item.reward is not None and not item.is_error:
                passes[item.task_id][0] += item.passed
                passes[item.task_id][1] += 1
            if (run.id, index) in wanted:
                parsed[(run.id, index)] = item
    by_id = {r.id: r for r in runs}
    out: list[dict[str, Any]] = []

    def rate(task_id: str) -> float | None:
        k, n = passes.get(task_id, (0, 0))
        return k / n if n else None

    for (run_id, index), row in sorted(shown.items()):
        rec = parsed.get((run_id, index))
        if rec is None or not rec.messages:
            continue
        out.append(
            {
                "messages": [_message(m.to_openai()) for m in rec.messages],
                "task_id": rec.task_id,
                "rollout_index": rec.rollout_index,
                "reward": rec.reward,
                "passed": rec.passed,
                "label": row.value,
                "corrected": False,
                "task_pass_rate": rate(rec.task_id),
                "provenance": {
                    **_provenance(by_id[run_id], version, index),
                    "label_author": row.author.name,
                    "labelled_at": row.created_at.isoformat() + "Z",
                    "label_note": row.note,
                },
            }
        )
    for fix in fixes:
        rec = parsed.get((fix.run_id, fix.rollout))
        if rec is None or fix.state != GRADED:
            continue
        label = shown.get((fix.run_id, fix.rollout))
        out.append(
            {
                "messages": [
                    _message(Message.model_validate(m).to_openai()) for m in json.loads(fix.messages)
                ],
                "task_id": rec.task_id,
                "rollout_index": rec.rollout_index,
                "reward": fix.reward,
                "passed": fix.passed,
                "label": None,  # the correction is not what the label judged: see parent_label
                "corrected": True,
                "task_pass_rate": rate(rec.task_id),
                "provenance": {
                    **_provenance(by_id[fix.run_id], version, fix.rollout),
                    "correction": fix.id,
                    "correction_author": fix.author.name,
                    "parent_label": label.value if label is not None else None,
                    "corrected_at": fix.created_at.isoformat() + "Z",
                },
            }
        )
    return out
