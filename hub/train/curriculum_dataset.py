"""A training dataset whose rows a :class:`~hub.train.curriculum.Curriculum` chooses as it goes.

::

    cur = Curriculum(env.difficulty_space())
    dataset = CurriculumDataset(env, cur, size=10_000)       # rows: to_dataset's columns
    reward = reward_function(env, curriculum=cur)           # teaches cur from every batch
    trainer = GRPOTrainer(..., reward_funcs=reward, train_dataset=dataset)

A trainer reads a map-style dataset by index (GRPO reads each index once per generation of
its group): row ``i`` is drawn from the curriculum the first time ``i`` is read and kept, so
the repeats of an index are the same task, and later rows follow what the rewards taught the
curriculum. Only the most recent ``keep`` rows are held.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from hub.env import Environment, UsageError
from hub.train.curriculum import Curriculum
from hub.train.rewards import task_row

__all__ = ["CurriculumDataset"]


class CurriculumDataset:
    """``size`` rows (``prompt``, ``task_id``, ``answer``, ``metadata``) drawn lazily from ``curriculum``."""

    def __init__(
        self,
        env: Environment,
        curriculum: Curriculum,
        size: int,
        *,
        split: str = "train",
        seed: int = 0,
        keep: int = 4096,
    ) -> None:
        if size < 1 or keep < 1:
            raise UsageError("a curriculum dataset needs size >= 1 and keep >= 1")
        if split not in env.splits:
            raise UsageError(f"{env.id} has no split {split!r}; it has: {', '.join(env.splits)}")
        self.env = env
        self.curriculum = curriculum
        self.size = size
        self.split = split
        self.seed = seed
        self.keep = keep
        self._rows: OrderedDict[int, dict[str, Any]] = OrderedDict()
        self.column_names = ["prompt", "task_id", "answer", "metadata"]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        if not -self.size <= index < self.size:
            raise IndexError(index)
        index %= self.size
        row = self._rows.get(index)
        if row is None:
            (task,) = self.curriculum.next_tasks(self.env, 1, split=self.split, seed=self.seed)
            row = task_row(self.env, task)
            self._rows[index] = row
            while len(self._rows) > self.keep:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end(index)
        return row

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self.size):
            yield self[i]
