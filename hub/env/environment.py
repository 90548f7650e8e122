"""The Environment API.

An :class:`Environment` is a set of tasks (:meth:`Environment.tasks`) plus three async methods
the runner calls for each rollout: ``reset(task)`` (the opening messages), ``step(state, action)``
(the environment's reply, until terminated or truncated) and ``grade(task, rollout)`` (a Grade
in [0, 1]). One instance serves many concurrent rollouts: per-rollout data lives in
:class:`~hub.env.types.State`.

:class:`SingleTurnEnv` is tasks and a grader (one answer, then grading); a :class:`MultiTurnEnv`
overrides :meth:`Environment.step` to answer the model; :class:`~hub.env.tools.ToolEnv` runs tools.

``num_tasks(split)`` is ``None`` for procedural environments that generate tasks without end (the
runner then needs ``--num-tasks``). An environment may declare a difficulty space
(:mod:`hub.env.difficulty`) and make tasks at a point of it (``tasks_at``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from graders.grade import Grade
from graders.protocol import Grader
from hub.env.difficulty import POINT_KEY, SINGLE_POINT, DifficultySpace, Point
from hub.env.errors import EnvironmentDefinitionError, UnknownSplitError
from hub.env.types import Message, Rollout, State, Step, Task

if TYPE_CHECKING:
    pass

__all__ = ["Environment", "GradedEnv", "MultiTurnEnv", "PointSource", "SingleTurnEnv", "TaskSource"]

TaskSource = Callable[[str, int], Iterator[Task]]
"""A generator of tasks without end: ``source(split, seed)`` yields tasks deterministically."""

PointSource = Callable[[Mapping[str, Any], str, int], Iterable[Task]]
"""Tasks at one difficulty point: ``source(point, split, seed)``, ids unique within the point
(see :mod:`hub.env.difficulty`)."""


class Environment(ABC):
    """Base class of every verihub environment (see the module docstring for a reading guide)."""

    id: str = "unnamed"
    version: str = "0.0.0"
    system_prompt: str | None = None
    max_turns: int = 1
    difficulty: DifficultySpace | None = None
    """The difficulty space this environment declares (None: one point, its ordinary tasks)."""

    def __init__(
        self,
        *,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int | None = None,
    ) -> None:
        if id is not None:
            self.id = id
        if version is not None:
            self.version = version
        if system_prompt is not None:
            self.system_prompt = system_prompt
        if max_turns is not None:
            if max_turns < 1:
                raise EnvironmentDefinitionError(f"max_turns must be >= 1, got {max_turns}")
            self.max_turns = max_turns

    # -- tasks ---------------------------------------------------------------------------------
    @property
    def splits(self) -> tuple[str, ...]:
        """Names of the splits this environment offers."""
        return ("test",)

    @abstractmethod
    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        """The tasks of ``split`` in a stable order. ``seed`` matters only for generated tasks."""

    def num_tasks(self, split: str = "test") -> int | None:
        """How many tasks ``split`` has, or None when tasks are generated without end."""
        tasks = self.tasks(split)
        return len(tasks) if isinstance(tasks, Sequence) else None

    def difficulty_space(self) -> DifficultySpace:
        """The declared difficulty space, or the one-point space of an environment without one."""
        return self.difficulty if self.difficulty is not None else SINGLE_POINT

    def tasks_at(self, point: Point | None = None, split: str = "train", *, seed: int = 0) -> Iterator[Task]:
        """Tasks of ``split`` at difficulty ``point`` (axes left out take their starting level).

        Ids get ``@LABEL`` appended (``train-0-5@level=2``) and metadata the point under
        :data:`hub.env.difficulty.POINT_KEY`; without a declared space these are :meth:`tasks`.
        """
        space = self.difficulty_space()
        p = space.point(point)
        if not space.axes:
            return _at_point(self.tasks(split, seed=seed), "", p)
        return _at_point(self.point_tasks(p, split, seed), "@" + space.label(p), p)

    def point_tasks(self, point: Mapping[str, Any], split: str, seed: int) -> Iterable[Task]:
        """Tasks at a complete, checked ``point``: override it when declaring ``difficulty``."""
        raise EnvironmentDefinitionError(
            f"{self.id} declares a difficulty space but does not make tasks at a point"
        )

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        """OpenAI ``tools`` for the model request, or None."""
        return None

    # -- one rollout ---------------------------------------------------------------------------
    async def reset(self, task: Task) -> State:
        """Start a rollout: the opening messages for ``task``."""
        return State(task=task, messages=task.messages(self.system_prompt))

    async def step(self, state: State, action: Message) -> Step:
        """Answer the model's ``action``. The default ends the episode after one answer."""
        return _ANSWERED

    @abstractmethod
    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        """Score a finished rollout. Raise only when grading itself fails.

        Grading runs on the run's event loop: synchronous work that can take long (sympy, a big
        regex, a subprocess) belongs in a worker pool with a hard timeout, e.g.
        :class:`hub.env.pooled.PooledGrade` around a plain ``fn(task, completion) -> Grade``. A grader
        that blocks the loop past the run's grade timeout is recorded as a timeout.
        """

    def metrics(self, task: Task, rollout: Rollout) -> Mapping[str, tuple[float, float]]:
        """Named summary metrics a graded rollout contributes to, as ``(numerator, denominator)``.

        A run reports each metric as ``sum(numerator) / sum(denominator)`` over its graded
        rollouts (``summary.json``'s ``metrics``): ``(1, 1)``/``(0, 1)`` per rollout gives a
        rate, ``(k, n)`` per rollout a rate over n items each (IFEval's instruction level). The
        values are stored on the rollout (``extra.metrics``), so a summary can be recomputed from
        ``rollouts.jsonl`` alone. Must be quick and pure; the default declares none.
        """
        return {}

    async def aclose(self) -> None:
        """Release what the environment holds (judge clients, proof-checker processes).

        The runner calls it once when a run ends, on success or failure. The default does nothing.
        """
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}@{self.version}>"


def _at_point(source: Iterable[Task], suffix: str, point: Mapping[str, Any]) -> Iterator[Task]:
    for task in source:
        yield task.model_copy(
            update={"id": task.id + suffix, "metadata": {**task.metadata, POINT_KEY: dict(point)}}
        )


_ANSWERED = Step(terminated=True)
"""The default step's answer, one shared (frozen) record: nothing reads its empty ``info`` to change it."""


class _TaskTable:
    """Tasks given as a list, a mapping of split to list, or a generator function."""

    def __init__(self, tasks: Sequence[Task] | Mapping[str, Sequence[Task]] | TaskSource) -> None:
        self._source: TaskSource | None = None
        self._table: dict[str, Sequence[Task]] = {}
        if callable(tasks) and not isinstance(tasks, (Sequence, Mapping)):
            self._source = tasks
        elif isinstance(tasks, Mapping):
            self._table = dict(tasks)
        else:
            self._table = {"test": list(tasks)}
        for split, rows in self._table.items():
            ids = [t.id for t in rows]
            if len(set(ids)) != len(ids):
                raise EnvironmentDefinitionError(f"split {split!r} has duplicate task ids")

    def splits(self) -> tuple[str, ...]:
        return tuple(self._table) if self._source is None else ("train", "test")

    def get(self, split: str, seed: int) -> Iterable[Task]:
        if self._source is not None:
            if split not in ("train", "test"):
                raise UnknownSplitError(split, ("train", "test"))
            return self._source(split, seed)
        if split not in self._table:
            raise UnknownSplitError(split, tuple(self._table))
        return self._table[split]


class GradedEnv(Environment):
    """An environment made of a task table and a grader (the base of the two below)."""

    def __init__(
        self,
        *,
        tasks: Sequence[Task] | Mapping[str, Sequence[Task]] | TaskSource,
        grader: Grader,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int | None = None,
        difficulty: DifficultySpace | None = None,
        point_source: PointSource | None = None,
    ) -> None:
        super().__init__(id=id, version=version, system_prompt=system_prompt, max_turns=max_turns)
        self._tasks = _TaskTable(tasks)
        self.grader = grader
        if (difficulty is None) != (point_source is None):
            raise EnvironmentDefinitionError(
                "give difficulty= and point_source= together (a space and its tasks)"
            )
        if difficulty is not None:
            self.difficulty = difficulty
        self._point_source = point_source

    def point_tasks(self, point: Mapping[str, Any], split: str, seed: int) -> Iterable[Task]:
        if self._point_source is None:
            return super().point_tasks(point, split, seed)
        if split not in self.splits:
            raise UnknownSplitError(split, self.splits)
        return self._point_source(point, split, seed)

    @property
    def splits(self) -> tuple[str, ...]:
        return self._tasks.splits()

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterable[Task]:
        return self._tasks.get(split, seed)

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        """Grade the final answer against the task's reference answer."""
        return await self.grader(rollout.completion, reference=task.answer)


class SingleTurnEnv(GradedEnv):
    """One prompt, one answer, one grade.

    Example::

        env = SingleTurnEnv(id="capitals", grader=my_grader,
                            tasks=[Task(id="fr", prompt="Capital of France?", answer="Paris")])
    """

    max_turns = 1


class MultiTurnEnv(GradedEnv):
    """A conversation over several turns: override :meth:`step` to reply to the model.

    ``step`` returns the environment's messages (feedback, a tool result, the next question)
    and whether the episode ``terminated``; the runner stops at ``max_turns`` and marks the
    rollout ``truncated``. Grading defaults to the grader on the final answer; override
    :meth:`grade` to grade the whole transcript.
    """

    max_turns = 4

    @abstractmethod
    async def step(self, state: State, action: Message) -> Step:
        """Reply to the model's latest message."""
