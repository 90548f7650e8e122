"""A verihub environment as an infinite verifiers v1 taskset whose tasks a curriculum chooses.

::

    taskset = to_v1_curriculum_taskset("textops", group_size=8)   # INFINITE: take(n) to bound it
    for task in taskset.take(64): ...                             # drawn as they are pulled

Tasks are drawn from a :class:`~hub.train.curriculum.Curriculum` over the environment's
difficulty space when the v1 runner pulls them, so later tasks follow earlier outcomes. Each
graded trace teaches the curriculum: its reward waits until ``group_size`` rewards of the same
task have arrived (the rollouts of one example), then the group is observed (with
``group_size`` 1 every trace is its own group, and the advantage gate never sees variance).
One curriculum per (environment, arguments, split, seed) in a process; :func:`curriculum_of`
returns it (to save its state with a trainer's checkpoints). Imports ``verifiers.v1``.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graders.grade import Grade
from hub.env import POINT_KEY, UsageError
from hub.train.curriculum import Curriculum, CurriculumConfig, require_difficulty
from hub.train.v1_taskset import VerihubTask, VerihubTaskData, VerihubTasksetConfig, _environment, task_data

__all__ = ["VerihubCurriculumTaskset", "curriculum_of", "to_v1_curriculum_taskset"]

vf: Any = importlib.import_module("verifiers.v1")


@dataclass
class _Learner:
    curriculum: Curriculum
    group_size: int
    pending: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, task_id: str, point: Any, reward: float) -> None:
        with self.lock:
            group = self.pending.setdefault(task_id, [])
            group.append(reward)
            if len(group) >= self.group_size:
                del self.pending[task_id]
                self.curriculum.observe(point, group)


_LEARNERS: dict[str, _Learner] = {}


def _key(env: str, args_json: str, split: str, seed: int) -> str:
    return json.dumps([env, args_json, split, seed])


def curriculum_of(
    env: str, *, env_args: dict[str, Any] | None = None, split: str = "train", seed: int = 0
) -> Curriculum:
    """The curriculum the tasksets of this environment use in this process."""
    learner = _LEARNERS.get(_key(env, json.dumps(env_args or {}, sort_keys=True), split, seed))
    if learner is None:
        raise UsageError(f"no curriculum taskset of {env} has been loaded in this process")
    return learner.curriculum


class VerihubCurriculumTaskData(VerihubTaskData):
    """A verihub task and the curriculum it teaches (its key in this process)."""

    curriculum_key: str = ""


class VerihubCurriculumTask(VerihubTask):
    """A verihub task whose grade also teaches the curriculum it came from."""

    async def _grade(self, task: VerihubTaskData, trace: Any) -> Grade:
        first = trace.info.get("verihub_grade") is None
        grade = await super()._grade(task, trace)
        learner = _LEARNERS.get(getattr(task, "curriculum_key", ""))
        if first and learner is not None:
            point = json.loads(task.metadata).get(POINT_KEY)
            if point is not None:
                learner.add(task.task_id, point, task.error_value if grade.is_error else float(grade.score))
        return grade


class VerihubCurriculumConfig(VerihubTasksetConfig):
    """``--env.taskset.*`` flags: the environment, and the curriculum's band and group size."""

    split: str = "train"
    band_low: float = 1 / 64
    band_high: float = 0.7
    min_samples: int = 16
    group_size: int = 1


class VerihubCurriculumTaskset(vf.Taskset[VerihubCurriculumTask, VerihubCurriculumConfig]):  # type: ignore[misc]
    """An environment's tasks, drawn without end from a curriculum (see the module doc)."""

    INFINITE = True

    def load(self) -> Iterator[VerihubCurriculumTask]:
        cfg = self.config
        if not cfg.env:
            raise UsageError("say which verihub environment: --env.taskset.env ENV_ID (see `verihub list`)")
        args_json = json.dumps(cfg.env_args, sort_keys=True)
        env = _environment(cfg.env, args_json)
        require_difficulty(env)
        key = _key(cfg.env, args_json, cfg.split, cfg.seed)
        if key not in _LEARNERS:
            rules = CurriculumConfig(band=(cfg.band_low, cfg.band_high), min_samples=cfg.min_samples)
            _LEARNERS[key] = _Learner(
                Curriculum(env.difficulty_space(), rules, seed=cfg.seed), max(1, cfg.group_size)
            )
        curriculum = _LEARNERS[key].curriculum
        while True:
            (t,) = curriculum.next_tasks(env, 1, split=cfg.split, seed=cfg.seed)
            base = task_data(env, t, cfg)
            data = VerihubCurriculumTaskData(**base.model_dump(), curriculum_key=key)
            yield VerihubCurriculumTask(data, cfg.task)


def to_v1_curriculum_taskset(
    env_id: str,
    *,
    env_args: dict[str, Any] | None = None,
    split: str = "train",
    seed: int = 0,
    band: tuple[float, float] = (1 / 64, 0.7),
    min_samples: int = 16,
    group_size: int = 1,
) -> VerihubCurriculumTaskset:
    """The installed verihub environment ``env_id`` as an infinite, curriculum-driven v1 taskset."""
    config = VerihubCurriculumConfig(
        id=__name__,
        env=env_id,
        env_args=dict(env_args or {}),
        split=split,
        seed=seed,
        band_low=band[0],
        band_high=band[1],
        min_samples=min_samples,
        group_size=group_size,
    )
    return VerihubCurriculumTaskset(config)
