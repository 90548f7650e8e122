"""A training dataset whose rows a :class:`~hub.train.curriculum.Curriculum` chooses as it goes.

::

    cur = Curriculum(env.difficulty_space())
    dataset = CurriculumDataset(env, cur, size=10_000)       # rows: to_dataset's columns
    reward = reward_function(env, curriculum=cur)           # teaches cur from every batch
    trainer = GRPOTrainer(..., reward_funcs=reward, train_dataset=dataset.to_iterable_dataset(),
                          args=GRPOConfig(..., max_steps=N, shuffle_dataset=False))

TRL's ``GRPOTrainer`` takes only a ``datasets`` dataset: :meth:`CurriculumDataset.to_iterable_dataset`
is a ``datasets.IterableDataset`` that draws each row from the curriculum when the trainer
reads it (the trainer repeats it for its group itself), so later rows follow what the rewards
taught the curriculum. Keep ``shuffle_dataset=False``: a shuffled stream reads a buffer of
rows (1,000) ahead of the rewards.

Read by index (a map-style dataset, for loops of your own): row ``i`` is drawn the first time
``i`` is read and kept, so the repeats of an index are the same task. Only the most recent
``keep`` rows are held.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hub.env import Environment, UsageError
from hub.train.curriculum import Curriculum
from hub.train.rewards import task_row

if TYPE_CHECKING:
    from datasets import IterableDataset

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

    def to_iterable_dataset(self) -> IterableDataset:
        """A ``datasets.IterableDataset`` of ``size`` rows, each drawn from the curriculum when
        read (not kept: a stream is read once); for TRL's ``GRPOTrainer``."""
        from datasets import IterableDataset

        return IterableDataset.from_generator(self._stream)

    def _stream(self) -> Iterator[dict[str, Any]]:
        for _ in range(self.size):
            (task,) = self.curriculum.next_tasks(self.env, 1, split=self.split, seed=self.seed)
            yield task_row(self.env, task)
