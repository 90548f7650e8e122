"""``StatefulToolEnv``: tools that work on a rollout's own copy of a SQLite database.

A tool's first parameter receives the rollout's :class:`~hub.env.state.RolloutDatabase`; the
model sees only the other parameters. Each call is one transaction (rolled back when the tool
raises or returns text starting with ``error``). The copy is made at ``reset`` and closed when
the episode ends, when the rollout's state is dropped (cancelled, timed out, crashed; a
sandboxed environment's server drops it on ``release``), and at :meth:`aclose`. Reset and steps
may run in different asyncio tasks.

Grading (:mod:`hub.env.state_grading`) replays the transcript's successful calls on a fresh copy,
so a grade depends on the record alone and tools must be deterministic apart from the declared
``volatile`` columns. At load the gold actions are replayed (some twice) and a failing action, a
task without requirements or a nondeterministic tool is refused. An example and the rules:
docs/writing-an-environment.md (``StatefulToolEnv``).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from graders.grade import Grade
from hub.env.environment import TaskSource
from hub.env.errors import EnvironmentDefinitionError
from hub.env.state import (
    RolloutDatabase,
    SeedDatabase,
    Snapshot,
    Storage,
    snapshot,
    snapshot_diff,
    table_digests,
)
from hub.env.state_grading import (
    Action,
    StateRequirements,
    executed_actions,
    grade_requirements,
    requirements_of,
)
from hub.env.tools import MAX_CALLS_PER_TURN, Tool, ToolEnv
from hub.env.types import Message, Rollout, State, Step, Task

__all__ = ["STATE_KEY", "Replay", "StatefulToolEnv"]

STATE_KEY = "verihub_state"
"""``state.data`` key of the rollout's database (and the key tools receive it under)."""


async def _unused_grader(response: str, *, reference: Any) -> Grade:
    return Grade.error("a stateful environment grades with its requirements, not a text grader")


def _transactional(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(**kwargs: Any) -> Any:
        db: RolloutDatabase = kwargs.pop(STATE_KEY)
        with db.transaction():
            result = fn(db, **kwargs)
            if isinstance(result, str) and result.startswith("error"):
                db.rollback()
            return result

    run.__name__ = getattr(fn, "__name__", "tool")
    return run


class StatefulToolEnv(ToolEnv):
    """A tool environment whose rollouts each own a copy of a seed database."""

    max_turns = 16

    def __init__(
        self,
        *,
        tools: Sequence[Callable[..., Any]],
        tasks: Sequence[Task] | Mapping[str, Sequence[Task]] | TaskSource,
        seed: SeedDatabase | Callable[[Task], SeedDatabase],
        volatile: Mapping[str, Sequence[str]] | None = None,
        storage: Storage = "memory",
        verify_gold: int | None = 1000,
        id: str | None = None,
        version: str | None = None,
        system_prompt: str | None = None,
        max_turns: int = 16,
        tool_timeout_s: float = 10.0,
        max_result_chars: int = 8_000,
        max_calls_per_turn: int = MAX_CALLS_PER_TURN,
    ) -> None:
        super().__init__(
            tools=[],
            tasks=tasks,
            grader=_unused_grader,
            id=id,
            version=version,
            system_prompt=system_prompt,
            max_turns=max_turns,
            tool_timeout_s=tool_timeout_s,
            max_result_chars=max_result_chars,
            max_calls_per_turn=max_calls_per_turn,
        )
        built: dict[str, Tool] = {}
        for fn in tools:
            params = list(inspect.signature(fn).parameters)
            name = getattr(fn, "__name__", "tool")
            if inspect.iscoroutinefunction(fn):
                raise EnvironmentDefinitionError(
                    f"stateful tool {name}: must be a plain def (SQLite is synchronous)"
                )
            if not params:
                raise EnvironmentDefinitionError(
                    f"stateful tool {name}: its first parameter must take the database"
                )
            tool = Tool.from_function(fn, bound=(params[0],))
            if tool.name in built:
                raise EnvironmentDefinitionError(f"duplicate tool name {tool.name!r}")
            built[tool.name] = dataclasses.replace(tool, fn=_transactional(fn))
        self.tools = built
        self.volatile: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in (volatile or {}).items()}
        self.storage: Storage = storage
        self._seed = seed
        self._live: weakref.WeakSet[RolloutDatabase] = weakref.WeakSet()
        self._folder: str | None = None
        self._gold_digest: dict[str, tuple[frozenset[str], dict[str, str]]] = {}
        if verify_gold:
            self.verify_gold(verify_gold)

    # -- state -----------------------------------------------------------------------------------
    def seed_for(self, task: Task) -> SeedDatabase:
        return self._seed if isinstance(self._seed, SeedDatabase) else self._seed(task)

    def open_state(self, task: Task) -> RolloutDatabase:
        """A new copy of ``task``'s seed database, tracked until it is closed."""
        if self.storage == "file" and self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="verihub-states-")
        db = self.seed_for(task).open(storage=self.storage, folder=self._folder)
        self._live.add(db)
        return db

    def live_states(self) -> int:
        """How many rollout databases are open now."""
        return sum(1 for db in list(self._live) if not db.closed)

    async def reset(self, task: Task) -> State:
        state = await super().reset(task)
        db = self.open_state(task)
        state.data[STATE_KEY] = db
        weakref.finalize(state, db.close)  # cancelled, timed out, crashed: the state is dropped
        return state

    def tool_context(self, state: State) -> Mapping[str, Any]:
        return {STATE_KEY: state.data[STATE_KEY]}

    async def step(self, state: State, action: Message) -> Step:
        try:
            step = await super().step(state, action)
        except BaseException:  # cancelled or timed out during a tool call: the rollout is over
            self.close_state(state)
            raise
        if step.terminated or step.truncated:
            self.close_state(state)
        return step

    def close_state(self, state: State) -> None:
        db = state.data.get(STATE_KEY)
        if isinstance(db, RolloutDatabase):
            db.close()

    async def aclose(self) -> None:
        for db in list(self._live):
            db.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        await super().aclose()

    # -- replay and grading ----------------------------------------------------------------------
    def call_now(self, db: RolloutDatabase, action: Action) -> str:
        """Run one action on ``db`` synchronously, as the model's call would run."""
        tool = self.tools.get(action.name)
        if tool is None:
            return f"error: unknown tool {action.name!r}"
        try:
            args = tool.args_model.model_validate(action.arguments)
            kwargs = {name: getattr(args, name) for name in type(args).model_fields}
            result = tool.fn(**kwargs, **{STATE_KEY: db})
        except Exception as exc:  # the same text the model would get
            return f"error: {type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def replay(
        self,
        task: Task,
        actions: Sequence[Action],
        *,
        tables: Iterable[str] | None = None,
        rows: bool = False,
        digest: bool = True,
    ) -> Replay:
        """``actions`` on a fresh copy: digests (and with ``rows``, the rows) of the tables they
        wrote and of ``tables`` (of every table when ``tables`` is None), and each action's result."""
        db = self.seed_for(task).open()
        try:
            results = [self.call_now(db, a) for a in actions]
            written = frozenset(db.written)
            listed = None if tables is None else written | set(tables)
            digests = table_digests(db.connection, self.volatile, listed) if digest else {}
            state = snapshot(db.connection, self.volatile, listed) if rows else {}
            return Replay(digests, state, results, written)
        finally:
            db.close()

    def requirements(self, task: Task) -> StateRequirements:
        spec = requirements_of(task)
        if spec is None:
            raise EnvironmentDefinitionError(
                f"task {task.id}: its answer must be a StateRequirements (gold actions and at least "
                "one state or action requirement)"
            )
        return spec

    def gold_actions(self, task: Task) -> tuple[Action, ...]:
        return self.requirements(task).gold_actions

    def _gold(
        self, task: Task, tables: Iterable[str] = (), *, rows: bool = False, digest: bool = True
    ) -> Replay:
        spec = self.requirements(task)
        gold = self.replay(task, spec.gold_actions, tables=tables, rows=rows, digest=digest)
        for i, (action, result) in enumerate(zip(spec.gold_actions, gold.results, strict=True)):
            if result.startswith("error"):
                raise EnvironmentDefinitionError(
                    f"task {task.id}: gold action {i + 1} ({action.name}) fails on replay: {result[:200]}"
                )
        if digest:
            self._gold_digest[task.id] = (gold.written, {t: gold.digests[t] for t in gold.written})
        return gold

    def verify_gold(self, per_split: int, *, twice: int = 16) -> None:
        """Replay the gold actions of up to ``per_split`` tasks of each split (the first ``twice``
        of them twice, to catch tools that are not deterministic; the others' final states are
        read when a rollout of theirs is first graded)."""
        for split in self.splits:
            tasks: Iterable[Task] = self.tasks(split)
            for i, task in enumerate(itertools.islice(tasks, per_split)):
                first = self._gold(task, digest=i < twice)
                if i >= twice:
                    continue
                second = self._gold(task)
                if first.digests != second.digests:
                    again = [self._gold(task, rows=True).state for _ in range(2)]
                    raise EnvironmentDefinitionError(
                        f"task {task.id}: two replays of its gold actions end in different states "
                        "(a tool is not deterministic; declare its changing columns volatile): "
                        + "; ".join(snapshot_diff(*again))
                    )

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        spec = self.requirements(task)
        actions = executed_actions(rollout.messages)
        equal, diff = True, []
        if spec.check_state:
            if task.id not in self._gold_digest:
                self._gold(task)
            gold_written, gold_digests = self._gold_digest[task.id]
            got = self.replay(task, actions, tables=gold_written)
            seed_digests = self.seed_for(task).digests(self.volatile)
            want = {t: gold_digests.get(t, seed_digests.get(t)) for t in got.digests}
            equal = got.digests == want
            if not equal:
                tables = got.written | gold_written
                mine = self.replay(task, actions, tables=tables, rows=True).state
                diff = snapshot_diff(mine, self._gold(task, tables=tables, rows=True).state)
        return grade_requirements(
            spec, actions=actions, completion=rollout.completion, state_equal=equal, state_diff=diff
        )


class Replay(NamedTuple):
    """What a replay left: digests of the tables it looked at (their rows when asked), each
    action's result, and the tables its statements wrote."""

    digests: dict[str, str]
    state: Snapshot
    results: list[str]
    written: frozenset[str]
