"""Optional check of a run's task set against the installed environment, and the tasks themselves
for a band export (:func:`run_tasks`).

The integrity checks of :mod:`leaderboard.verify` prove that a run covers the tasks its own summary
lists. This check goes further: with the same environment installed (same version and content
hash), the tasks a run of this config selects are re-derived, and the run must list exactly those.
It loads the environment, so it is opt-in (``add --check-tasks``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hub.env import Task, VerihubError
from hub.run import RunConfig

__all__ = ["check_task_ids", "run_tasks"]

_MAX_LISTED = 5


def run_tasks(config: RunConfig) -> list[Task] | str:
    """The tasks ``config`` selects from the installed environment, or why they cannot be had
    (not installed, or installed with another version or content hash)."""
    from hub.registry import load_environment, package_hash

    where = f"{config.env_id} {config.env_version}"
    try:
        installed_hash = package_hash(config.env_id)
        if installed_hash != config.env_hash:
            return f"the installed {config.env_id} has hash {installed_hash}, the run used {config.env_hash}"
        env = load_environment(config.env_id, **config.env_args)
        if env.version != config.env_version:
            return f"{config.env_id} {env.version} is installed, not {where}"
        return list(config.task_selection(env))
    except VerihubError as exc:
        return f"cannot load the tasks of {where}: {exc}"


def check_task_ids(config: RunConfig, task_ids: Sequence[str]) -> list[str]:
    """Reasons why ``task_ids`` are not the tasks ``config`` selects; [] when they are."""
    where = f"{config.env_id} {config.env_version}"
    tasks = run_tasks(config)
    if isinstance(tasks, str):
        return [f"cannot check the task set: {tasks} (install {where} or add without --check-tasks)"]
    expected = [t.id for t in tasks]
    have, want = set(task_ids), set(expected)
    if have == want and len(task_ids) == len(expected):
        return []
    missing = [t for t in expected if t not in have]
    foreign = [t for t in task_ids if t not in want]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(missing[:_MAX_LISTED])}")
    if foreign:
        parts.append(f"not selected by the config {', '.join(foreign[:_MAX_LISTED])}")
    if not parts:
        parts.append("a task is listed twice")
    return [f"the run's tasks are not the ones {where} selects for this config ({'; '.join(parts)})"]
