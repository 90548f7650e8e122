"""A run's settings: what makes two runs comparable, and how the settings are shown.

Two runs share a ranking only when they measured the same thing: the same environment build
(version and content hash), split and environment arguments, the same number of tasks and of
rollouts per task, and the same sampling (temperature, top_p, max_tokens, stop). The sampling seed
and the task-selection seed are not settings: runs that differ only there are repeated draws of one
measurement. :func:`settings_key` is that identity as a string.

Sampling is shown in full: a field left unset (None in ``config.json``) means the model server
chose, so it is shown as "server default", never as ``None``. The seed is the exception: the runner
sends every request a seed derived from the run's own seed (task, rollout index), so an unset
sampling seed of a run whose seed is known reads "per rollout, from run seed N".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from leaderboard.board import BoardEntry

__all__ = [
    "SAMPLING_FIELDS",
    "SERVER_DEFAULT",
    "sampling_items",
    "sampling_text",
    "run_shape",
    "settings_key",
    "settings_label",
]

SERVER_DEFAULT = "server default"

SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "stop", "seed")
"""Shown in this order; fields a newer verihub records come after them."""

_NOT_SETTINGS = frozenset({"seed"})


def _value(value: Any) -> str:
    if value is None:
        return SERVER_DEFAULT
    if isinstance(value, list | tuple):
        return ", ".join(json.dumps(v) for v in value) or "none"
    if isinstance(value, str):
        return json.dumps(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def sampling_items(
    sampling: Mapping[str, Any], *, run_seed: int | Sequence[int] | None = None
) -> list[tuple[str, str]]:
    """Every sampling field with its value as text; an unset one reads "server default", except
    an unset seed when ``run_seed`` (the run's seed, which the runner derives each request's from;
    several for identical runs shown as one row) is given."""
    names = [f for f in SAMPLING_FIELDS if f in sampling] + sorted(set(sampling) - set(SAMPLING_FIELDS))
    seeds = [run_seed] if isinstance(run_seed, int) else list(run_seed or [])
    out = []
    for name in names:
        if name == "seed" and sampling[name] is None and seeds:
            plural = "s" if len(seeds) > 1 else ""
            out.append((name, f"per rollout, from run seed{plural} {', '.join(map(str, seeds))}"))
        else:
            out.append((name, _value(sampling[name])))
    return out


def sampling_text(sampling: Mapping[str, Any]) -> str:
    """``temperature=server default, top_p=server default, max_tokens=64, ...``."""
    return ", ".join(f"{k}={v}" for k, v in sampling_items(sampling))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def settings_key(entry: BoardEntry) -> str:
    """The settings that must match for two runs to be ranked together, as canonical JSON."""
    sampling = {k: v for k, v in entry.sampling.items() if k not in _NOT_SETTINGS}
    return _canonical(
        {
            "env_id": entry.env_id,
            "env_version": entry.env_version,
            "env_hash": entry.env_hash,
            "split": entry.split,
            "env_args": entry.env_args or {},
            "n_tasks": entry.n_tasks,
            "rollouts_per_task": entry.rollouts_per_task,
            "sampling": sampling,
        }
    )


def run_shape(entry: BoardEntry) -> list[str]:
    """The settings beyond build, split and arguments: ``["4 tasks x 2", "temperature=0.7", ...]``."""
    sampling = {k: v for k, v in entry.sampling.items() if k not in _NOT_SETTINGS}
    shape = [f"{entry.n_tasks} tasks x {entry.rollouts_per_task}"]
    return shape + [f"{k}={v}" for k, v in sampling_items(sampling)]


def settings_label(entry: BoardEntry) -> str:
    """The settings of ``settings_key`` beyond the build, as one line."""
    parts = [f"split={entry.split}"]
    parts += [f"{k}={json.dumps(v)}" for k, v in sorted((entry.env_args or {}).items())]
    return ", ".join(parts + run_shape(entry))
