"""reasoning-gym datasets as verihub environments: its generator for tasks, its scorer as the
grader, its curriculum's attributes as the difficulty space.

::

    verihub eval reasoning-gym --env-arg dataset=leg_counting --model M -n 50

Task ``i`` is entry ``i`` of the dataset, its question as the prompt; the split is a hash of the
question (``train`` and ``test`` never share one). ``tasks_at(point)`` uses the configuration the
dataset's curriculum makes at that point (each curriculum attribute an axis of level indices).
Grading regenerates the entry from the task's metadata and calls the dataset's ``score_answer``
on the extracted answer; a score of 1 is a pass, a scorer that raises an incorrect answer. The
details: docs/training.md. Requires ``pip install 'verihub[reasoning-gym]'``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from graders.grade import Grade
from hub.env import (
    SPLITS,
    Axis,
    DifficultySpace,
    Environment,
    EnvironmentDefinitionError,
    Rollout,
    Task,
    UnknownSplitError,
    UsageError,
    split_of,
    stream_key,
)

__all__ = ["ReasoningGymEnv", "extract_answer", "load_environment"]

SIZE = 10**9
"""The dataset size asked of reasoning-gym: entries are generated on demand, so it is a bound only."""
SUFFIX = "\n\nReply with the final answer as: Answer: <answer>"
_TAGGED = re.compile(r"<answer>(.*?)</answer>", re.S)


def extract_answer(completion: str) -> str:
    """The answer of a reply: after the last ``Answer:``, else the last ``<answer>`` tag, else all."""
    at = completion.rfind("Answer:")
    if at >= 0:
        return completion[at + len("Answer:") :].strip()
    tagged = _TAGGED.findall(completion)
    return (tagged[-1] if tagged else completion).strip()


def _factory() -> Any:
    try:
        from reasoning_gym import factory
    except ImportError:
        raise UsageError("reasoning-gym is not installed: pip install 'verihub[reasoning-gym]'") from None
    return factory


class ReasoningGymEnv(Environment):
    """One reasoning-gym dataset (see the module docstring)."""

    max_turns = 1

    def __init__(self, dataset: str) -> None:
        factory = _factory()
        if dataset not in factory.DATASETS:
            known = ", ".join(sorted(factory.DATASETS)[:8])
            raise UsageError(f"reasoning-gym has no dataset {dataset!r} (it has {known}, ...)")
        super().__init__(id="reasoning-gym")
        self.dataset = dataset
        self._cache: dict[tuple[str, int], Any] = {}
        self._attributes: dict[str, Any] = {}
        if factory.has_curriculum(dataset):
            self._attributes = dict(factory.CURRICULA[dataset]().attributes)
            axes = []
            start = {}
            for name, attr in self._attributes.items():
                values = ", ".join(str(v) for v in attr.levels)
                axes.append(Axis(name, tuple(range(len(attr.levels))), f"{attr.description} ({values})"))
                start[name] = int(attr.default_level)
            self.difficulty = DifficultySpace.of(axes, start=start)

    @property
    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def render_answer(self, answer: str) -> str:
        """How a reply states a final answer (the review's gold and probe responses use it)."""
        return f"Answer: {answer}"

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        return self._stream("default", split, seed)

    def point_tasks(self, point: Mapping[str, Any], split: str, seed: int) -> Iterable[Task]:
        return self._stream(self.difficulty_space().label(point), split, seed)

    def _config_seed(self, seed: int) -> int:
        return stream_key("reasoning-gym", self.dataset, seed) % (2**31)

    def _data(self, label: str, config_seed: int) -> Any:
        """The reasoning-gym dataset at a point (``default``: its own default configuration)."""
        key = (label, config_seed)
        if key not in self._cache:
            factory = _factory()
            dataset_cls, config_cls = factory.DATASETS[self.dataset]
            if label == "default":
                config = config_cls(seed=config_seed, size=SIZE)
            else:
                curriculum = factory.CURRICULA[self.dataset]()
                for name, level in self.difficulty_space().parse(label).items():
                    curriculum.set_attr_level(name, int(level))
                config = curriculum.generate_configuration({"seed": config_seed, "size": SIZE})
            try:
                self._cache[key] = dataset_cls(config)
            except Exception as exc:
                raise EnvironmentDefinitionError(f"reasoning-gym {self.dataset} at {label}: {exc}") from exc
        return self._cache[key]

    def _stream(self, label: str, split: str, seed: int) -> Iterator[Task]:
        if split not in SPLITS:
            raise UnknownSplitError(split, SPLITS)
        config_seed = self._config_seed(seed)
        data = self._data(label, config_seed)
        return self._tasks(data, label, split, seed, config_seed)

    def _tasks(self, data: Any, label: str, split: str, seed: int, config_seed: int) -> Iterator[Task]:
        n = 0
        for index in range(SIZE):
            entry = data[index]
            question = str(entry["question"])
            if split_of(question) != split:
                continue
            yield Task(
                id=f"{split}-{seed}-{n}",
                prompt=question + SUFFIX,
                answer=None if entry.get("answer") is None else str(entry["answer"]),
                metadata={
                    "rg_dataset": self.dataset,
                    "rg_config": label,
                    "rg_seed": config_seed,
                    "rg_index": index,
                    "split": split,
                },
            )
            n += 1

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        meta = task.metadata
        try:
            data = self._data(str(meta["rg_config"]), int(meta["rg_seed"]))
            entry = data[int(meta["rg_index"])]
        except (KeyError, TypeError, ValueError) as exc:
            return Grade.error(f"task metadata does not locate a reasoning-gym entry: {exc!r}")
        answer = extract_answer(rollout.completion or "")
        try:
            score = float(data.score_answer(answer=answer, entry=entry))
        except Exception as exc:  # the scorer choked on this reply: a wrong answer, not our failure
            return Grade.incorrect(
                extracted=answer, reason=f"scorer raised {type(exc).__name__}: {exc}"[:300]
            )
        return Grade.from_score(
            score, extracted=answer, reason=f"reasoning-gym {self.dataset} score {score:g}"
        )


def load_environment(*, dataset: str = "") -> ReasoningGymEnv:
    """Build the environment for reasoning-gym dataset ``dataset`` (``--env-arg dataset=NAME``)."""
    if not dataset:
        raise UsageError("say which reasoning-gym dataset: --env-arg dataset=NAME (e.g. leg_counting)")
    return ReasoningGymEnv(dataset)
