"""Rollout datasets: a run directory as SFT chat data or as DPO preference pairs.

::

    records = sft_records("runs/a", only_passed=True)     # gold trajectories
    pairs = preference_pairs("runs/a")                    # prompt / chosen / rejected
    export_run("runs/a", out="sft.jsonl", fmt="jsonl", only_passed=True)

SFT records keep the whole transcript in ``messages`` with the reward, the task's pass rate and
``provenance`` (run, line, environment id, version and hash, model), filtered by
:class:`hub.train.sft_filters.SftFilter` (and ``tokens`` for a run made with ``--logprobs``). A
preference pair joins a passed and a failed rollout of one task in the conversational format of
TRL's ``DPOTrainer``. Rollouts without a verdict (model, environment or grader errors) are never
exported: an error is not a wrong answer.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from hub.env import Message, Rollout, UsageError
from hub.run import RunDir
from hub.train.sft_filters import SftFilter, add_pass_rates, apply_filters

__all__ = ["ExportFormat", "export_records", "export_run", "preference_pairs", "sft_records", "write_records"]

ExportFormat = Literal["hf", "jsonl"]


def sft_records(
    run_dir: str | os.PathLike[str], *, only_passed: bool = False, filters: SftFilter | None = None
) -> Iterator[dict[str, Any]]:
    """One chat-format record per graded rollout (only passed ones with ``only_passed``; only those
    ``filters`` keep), with the pass rate of its task in the run and its ``provenance``."""
    rundir = RunDir(run_dir)
    config = rundir.load_config()
    origin = {
        "source": "run_dir",
        "run": str(rundir.path),
        "env_id": config.env_id,
        "env_version": config.env_version,
        "env_hash": config.env_hash,
        "model": config.model,
    }
    graded = [r for r in rundir.iter_rollouts() if not (r.is_error or r.reward is None)]
    records: list[dict[str, Any]] = []
    for index, r in enumerate(rundir.iter_rollouts()):
        if r.is_error or r.reward is None or not r.messages:
            continue
        if only_passed and not r.passed:
            continue
        record: dict[str, Any] = {
            "messages": [_message(m) for m in r.messages],
            "task_id": r.task_id,
            "rollout_index": r.rollout_index,
            "reward": r.reward,
            "passed": r.passed,
            "provenance": {**origin, "rollout": index},
        }
        if r.extra.get("tokens"):
            record["tokens"] = r.extra["tokens"]
        records.append(record)
    add_pass_rates(records, ((r.task_id, r.passed) for r in graded))
    yield from apply_filters(records, filters) if filters is not None else records


def preference_pairs(run_dir: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """DPO pairs: the i-th passed rollout of a task with its i-th failed one (each used once)."""
    by_task: dict[str, tuple[list[Rollout], list[Rollout]]] = defaultdict(lambda: ([], []))
    order: list[str] = []
    for r in RunDir(run_dir).iter_rollouts():
        if r.is_error or r.reward is None or not r.messages:
            continue
        if r.task_id not in by_task:
            order.append(r.task_id)
        by_task[r.task_id][0 if r.passed else 1].append(r)
    for task_id in order:
        passed, failed = (sorted(g, key=lambda r: r.rollout_index) for g in by_task[task_id])
        for good, bad in zip(passed, failed, strict=False):  # unmatched extras are left out
            prompt, chosen = _split(good)
            bad_prompt, rejected = _split(bad)
            if bad_prompt != prompt or not chosen or not rejected:
                continue  # different openings (should not happen) or an empty answer side
            pair: dict[str, Any] = {
                "prompt": prompt,
                "chosen": chosen,
                "rejected": rejected,
                "task_id": task_id,
                "chosen_reward": good.reward,
                "rejected_reward": bad.reward,
            }
            if good.extra.get("tokens") or bad.extra.get("tokens"):
                pair["chosen_tokens"] = good.extra.get("tokens")
                pair["rejected_tokens"] = bad.extra.get("tokens")
            yield pair


def export_run(
    run_dir: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    fmt: ExportFormat = "jsonl",
    only_passed: bool = False,
    pairs: bool = False,
    filters: SftFilter | None = None,
) -> int:
    """Write the run's SFT records (or DPO pairs with ``pairs``) to ``out``; returns the count.

    ``jsonl``: one JSON record per line. ``hf``: ``datasets.Dataset.save_to_disk(out)``.
    """
    if pairs and only_passed:
        raise UsageError("--pairs needs failed rollouts too; drop --only-passed")
    if pairs and filters is not None and filters != SftFilter():
        raise UsageError("the SFT filters (--min-reward, --label, --corrected, --pass-rate-band) need --sft")
    if filters is not None and filters.needs_reviews:
        raise UsageError(
            "a run directory has no labels or corrections: export them from a hub with --hub OWNER/ID@VERSION"
        )
    _check_format(fmt)
    RunDir(run_dir).load_config()  # a clear error for a path that is not a run
    target = _fresh(out)
    records = list(
        preference_pairs(run_dir) if pairs else sft_records(run_dir, only_passed=only_passed, filters=filters)
    )
    if not records:
        what = "passed and failed rollouts of the same task" if pairs else "graded rollouts"
        raise UsageError(f"{run_dir} has no {what} to export" + ("" if pairs else " with these filters"))
    return write_records(records, target, fmt)


def export_records(
    records: list[dict[str, Any]],
    *,
    out: str | os.PathLike[str],
    fmt: ExportFormat = "jsonl",
    source: str = "",
) -> int:
    """Write SFT records from elsewhere (a hub's reviewed data, already filtered) to ``out``."""
    _check_format(fmt)
    target = _fresh(out)
    if not records:
        raise UsageError(f"{source or 'the source'} has no records to export with these filters")
    return write_records(records, target, fmt)


def _check_format(fmt: str) -> None:
    if fmt not in ("hf", "jsonl"):
        raise UsageError(f"unknown export format {fmt!r}; use hf or jsonl")


def _fresh(out: str | os.PathLike[str]) -> Path:
    target = Path(out)
    if target.exists() and (target.is_file() or any(target.iterdir())):
        raise UsageError(f"{target} already exists; choose another --out or remove it first")
    return target


def write_records(records: list[dict[str, Any]], target: Path, fmt: ExportFormat) -> int:
    """Write ``records`` as JSON lines, or as a ``datasets`` folder; returns how many."""
    if fmt == "jsonl":
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, target)
    else:
        from datasets import Dataset

        tools = any(len(m) > 2 for rec in records for col in _CHAT_COLUMNS for m in rec.get(col, ()))
        token_cols = sorted({c for rec in records for c in _TOKEN_COLUMNS if c in rec})
        rows = [{**{c: None for c in token_cols}, **_arrow_safe(rec, tools=tools)} for rec in records]
        Dataset.from_list(rows).save_to_disk(str(target))
    return len(records)


def _message(m: Message) -> dict[str, Any]:
    out = m.to_openai()
    if out.get("content") is None:
        out["content"] = ""
    return out


def _split(r: Rollout) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(opening messages, the rest) of a transcript, cut at the first assistant message."""
    cut = next((i for i, m in enumerate(r.messages) if m.role == "assistant"), len(r.messages))
    return [_message(m) for m in r.messages[:cut]], [_message(m) for m in r.messages[cut:]]


_CHAT_COLUMNS = ("messages", "prompt", "chosen", "rejected")
_TOKEN_COLUMNS = ("tokens", "chosen_tokens", "rejected_tokens")
"""Per-answer token records (``--logprobs`` runs): ``[{message_index, tokens, logprobs, token_ids}]``,
``message_index`` counting in the rollout's whole transcript."""


def _arrow_safe(rec: dict[str, Any], *, tools: bool) -> dict[str, Any]:
    """Arrow needs one schema per column: plain {role, content} messages, or, when the data has
    tool calls, every message with the same tool keys (the calls JSON-encoded)."""
    out = dict(rec)
    for col in _CHAT_COLUMNS:
        if col not in out:
            continue
        msgs = []
        for m in out[col]:
            item: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
            if tools:
                item["tool_calls"] = json.dumps(m["tool_calls"]) if m.get("tool_calls") else None
                item["tool_call_id"] = m.get("tool_call_id")
                item["name"] = m.get("name")
            msgs.append(item)
        out[col] = msgs
    if isinstance(out.get("provenance"), dict):  # its keys differ between sources: one JSON string
        out["provenance"] = json.dumps(out["provenance"], ensure_ascii=False)
    return out
