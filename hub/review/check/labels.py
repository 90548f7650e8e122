"""The check's verifier card: a package's own label file, graded by its own grader in the sandbox.

An environment package may ship labelled responses as ``labels.jsonl`` inside its import package
(the module its ``verihub.environments`` entry point names; declare it as package data so the
wheel carries it). The check reads the file here, outside the sandbox (data only, at most
:data:`MAX_LABEL_BYTES` and :data:`MAX_LABEL_LINES`), asks the sandboxed environment to grade
every line (:func:`hub.review.fidelity.measure`, within :data:`MAX_LABEL_SECONDS` in all) and
records the card on the report. A file that is too large, malformed, made for other tasks or
too slow to grade gives a ``warn`` with the reason, never a failed check: the card is optional,
and a version without one shows "error rate not measured".
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from hub.env import Environment, UsageError
from hub.env.aio import within
from hub.registry import ENTRY_POINT_GROUP, EntryPointsError, parse_entry_points
from hub.review.check.report import CheckReport
from hub.review.fidelity import measure, parse_labels
from hub.sandbox import MAX_DETAIL, clean, host_secrets

__all__ = [
    "LABEL_FILE",
    "MAX_LABEL_BYTES",
    "MAX_LABEL_LINES",
    "MAX_LABEL_SECONDS",
    "measure_packaged_labels",
    "packaged_labels",
]

LABEL_FILE = "labels.jsonl"
"""The label file's name, inside the environment's import package."""
MAX_LABEL_BYTES = 1 << 20
"""A larger label file is not measured (it would hold the review's sandbox past its time)."""
MAX_LABEL_LINES = 1000
"""Nor is one with more labelled lines than this."""
MAX_LABEL_SECONDS = 60.0
"""Grading the whole file may take this long (the sandbox's wall-clock limit covers the check)."""


def packaged_labels(stage: Path) -> Path | None:
    """Where a staged package's label file would be (``<import package>/labels.jsonl``), or None
    when the package names no single environment entry point."""
    infos = sorted(stage.glob("*.dist-info"))
    if len(infos) != 1:
        return None
    eps = infos[0] / "entry_points.txt"
    try:
        groups = parse_entry_points(eps.read_bytes() if eps.is_file() else b"")
    except EntryPointsError:
        return None
    targets = list(groups.get(ENTRY_POINT_GROUP, {}).values())
    if len(targets) != 1:
        return None
    module = targets[0].partition(":")[0].split(".")[0].strip()
    if not module.isidentifier():
        return None
    return stage / module / LABEL_FILE


def _read(path: Path) -> tuple[list[str], str] | str:
    """The file's lines and sha256, or why it is refused."""
    if path.is_symlink() or not path.is_file():
        return f"{path.name} is not a regular file"
    with path.open("rb") as handle:
        data = handle.read(MAX_LABEL_BYTES + 1)
    if len(data) > MAX_LABEL_BYTES:
        return f"{path.stat().st_size:,} bytes, over the {MAX_LABEL_BYTES:,}-byte limit"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    lines = text.splitlines()
    labelled = sum(1 for line in lines if line.strip())
    if labelled > MAX_LABEL_LINES:
        return f"{labelled:,} labelled lines, over the limit of {MAX_LABEL_LINES:,}"
    return lines, hashlib.sha256(data).hexdigest()


async def measure_packaged_labels(
    env: Environment,
    stage: Path,
    report: CheckReport,
    *,
    timeout_s: float,
    budget_s: float = MAX_LABEL_SECONDS,
) -> bool:
    """Measure the staged package's label file with ``env`` (the sandboxed environment) and
    record the card on ``report``; the check result ``verifier_card`` says what happened.
    True when lines were sent to be graded (the environment may still be busy with one)."""
    path = packaged_labels(stage)
    rel = f"{path.parent.name}/{LABEL_FILE}" if path is not None else LABEL_FILE
    if path is None or not (path.exists() or path.is_symlink()):
        report.add("verifier_card", "skip", f"no label file ({rel}): error rate not measured")
        return False
    found = _read(path)
    if isinstance(found, str):
        report.add("verifier_card", "warn", f"label file {rel} not measured: {found}")
        return False
    lines, sha256 = found
    try:
        records = parse_labels(lines, rel)
        card = await within(
            measure(env, records, source=rel, examples=3, concurrency=1, timeout_s=timeout_s),
            budget_s,
        )
    except UsageError as exc:
        report.add("verifier_card", "warn", f"label file {rel} not measured: {exc}")
        return False
    except asyncio.TimeoutError:
        why = f"grading its {len(records)} lines took longer than {budget_s:g}s"
        report.add("verifier_card", "warn", f"label file {rel} not measured: {why}")
        return True
    secrets = host_secrets()  # the grader's reasons are the package's words: capped and cleaned
    examples = [
        e.model_copy(
            update={
                "response": clean(e.response, MAX_DETAIL, secrets),
                "reason": clean(e.reason, MAX_DETAIL, secrets),
                "task_id": clean(e.task_id, 200, secrets),
                "reference": clean(e.reference, MAX_DETAIL, secrets),
            }
        )
        for e in card.examples
    ]
    card = card.model_copy(
        update={
            "labels_sha256": sha256,
            "env_id": clean(card.env_id, 200, secrets),
            "env_version": clean(card.env_version, 100, secrets),
            "examples": examples,
        }
    )
    report.verifier_card = card
    report.add(
        "verifier_card",
        "pass",
        f"{card.n} labelled responses: accuracy {card.accuracy.text()} (the card below)",
    )
    return True
