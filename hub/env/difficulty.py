"""Difficulty spaces: the named axes along which an environment makes its tasks harder.

An environment declares a :class:`DifficultySpace` (``Environment.difficulty``): axes with
ordered levels, easiest first, and a starting point. ``env.tasks_at(point, split, seed=...)``
then yields tasks at one point of it; each task's id gets the point's label appended
(``train-0-5@level=2``), so ids stay stable and unique when points are mixed, and its metadata
carries the point under :data:`POINT_KEY` (a trainer's reward reads it back from there).

An environment without a space has one point, ``{}``: its tasks are its ordinary tasks.

The space also orders its points as a *ladder* that a curriculum climbs one rung at a time:
either given, or a walk that raises one axis per rung, the least advanced one first (so two
axes of three levels climb ``(1,1) (2,1) (2,2) (3,2) (3,3)``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hub.env.errors import EnvironmentDefinitionError, UsageError

__all__ = [
    "POINT_KEY",
    "SINGLE_POINT",
    "Axis",
    "DifficultySpace",
    "Level",
    "OutcomeObserver",
    "Point",
    "wilson_interval",
]

Level = int | str
Point = Mapping[str, Level]

POINT_KEY = "difficulty_point"
"""The task metadata key that holds the point (``{"level": 2}``) a task was made at."""


@dataclass(frozen=True)
class Axis:
    """One named axis, its levels in order of difficulty (easiest first)."""

    name: str
    levels: tuple[Level, ...]
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise EnvironmentDefinitionError(f"difficulty axis name {self.name!r} must be an identifier")
        if not self.levels:
            raise EnvironmentDefinitionError(f"difficulty axis {self.name!r} has no levels")
        if len(set(self.levels)) != len(self.levels):
            raise EnvironmentDefinitionError(f"difficulty axis {self.name!r} repeats a level")
        for level in self.levels:
            if isinstance(level, bool) or not isinstance(level, (int, str)):
                raise EnvironmentDefinitionError(f"difficulty axis {self.name!r}: levels are ints or strings")
            if isinstance(level, str) and ("," in level or "=" in level or not level):
                raise EnvironmentDefinitionError(
                    f"difficulty level {level!r} may not be empty or hold ',' '='"
                )


@dataclass(frozen=True)
class DifficultySpace:
    """Named axes with ordered levels, a starting point, and the ladder a curriculum climbs."""

    axes: tuple[Axis, ...] = ()
    start: tuple[tuple[str, Level], ...] = ()
    """The starting point as ``(axis, level)`` pairs; an axis left out starts at its first level."""
    ladder_points: tuple[tuple[tuple[str, Level], ...], ...] = field(default=())
    """An explicit ladder (easiest first); empty: the default walk (see the module docstring)."""

    def __post_init__(self) -> None:
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise EnvironmentDefinitionError("difficulty axes must have distinct names")
        try:
            start = self.point(dict(self.start))
            ladder = [self.point(dict(p)) for p in self.ladder_points]
        except UsageError as exc:
            raise EnvironmentDefinitionError(f"difficulty space: {exc}") from None
        if ladder and start not in ladder:
            raise EnvironmentDefinitionError("difficulty space: the starting point is not on its ladder")

    @classmethod
    def of(cls, axes: Iterable[Axis], *, start: Point | None = None) -> DifficultySpace:
        """A space of ``axes`` starting at ``start`` (default: every axis at its first level)."""
        return cls(axes=tuple(axes), start=tuple((start or {}).items()))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise UsageError(f"no difficulty axis {name!r}; the axes are: {', '.join(self.names) or 'none'}")

    def point(self, point: Point | None = None) -> dict[str, Level]:
        """``point`` checked and completed (axes it leaves out take their starting level)."""
        given = dict(point or {})
        out: dict[str, Level] = {}
        start = dict(self.start)
        for a in self.axes:
            value = given.pop(a.name, start.get(a.name, a.levels[0]))
            if value not in a.levels:
                as_text = {str(v): v for v in a.levels}
                if str(value) not in as_text:
                    levels = ", ".join(str(v) for v in a.levels)
                    raise UsageError(f"difficulty {a.name}={value!r} is not a level; the levels are {levels}")
                value = as_text[str(value)]
            out[a.name] = value
        if given:
            raise UsageError(
                f"no difficulty axis {sorted(given)[0]!r}; the axes are: {', '.join(self.names) or 'none'}"
            )
        return out

    def start_point(self) -> dict[str, Level]:
        return self.point(dict(self.start))

    def label(self, point: Point) -> str:
        """``level=2`` (axes joined by commas); ``default`` for the one point of an empty space."""
        p = self.point(point)
        return ",".join(f"{k}={v}" for k, v in p.items()) or "default"

    def parse(self, label: str) -> dict[str, Level]:
        """The point a :meth:`label` names (``level=2,ops=mul``)."""
        if label in ("", "default"):
            return self.point({})
        pairs: dict[str, Level] = {}
        for part in label.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise UsageError(f"difficulty point {label!r} must look like AXIS=LEVEL[,AXIS=LEVEL]")
            pairs[key.strip()] = value.strip()
        return self.point(pairs)

    def ladder(self) -> list[dict[str, Level]]:
        """The points a curriculum climbs, easiest first (one point for an empty space)."""
        if self.ladder_points:
            return [self.point(dict(p)) for p in self.ladder_points]
        index = {a.name: 0 for a in self.axes}
        out = [self._at(index)]
        while True:
            open_axes = [a for a in self.axes if index[a.name] < len(a.levels) - 1]
            if not open_axes:
                return out
            nxt = min(open_axes, key=lambda a: (index[a.name] / (len(a.levels) - 1), self.axes.index(a)))
            index[nxt.name] += 1
            out.append(self._at(index))

    def _at(self, index: Mapping[str, int]) -> dict[str, Level]:
        return {a.name: a.levels[index[a.name]] for a in self.axes}

    def describe(self) -> list[dict[str, object]]:
        """The axes as JSON-able rows (``verihub info``)."""
        start = self.start_point()
        return [
            {"axis": a.name, "levels": list(a.levels), "start": start[a.name], "description": a.description}
            for a in self.axes
        ]


SINGLE_POINT = DifficultySpace()
"""The space of an environment that declares none: one point, ``{}``."""


class OutcomeObserver(Protocol):
    """What learns from graded groups (a curriculum): one call per group of rollouts of a task."""

    def observe(self, point: Point, rewards: Sequence[float | None]) -> bool:
        """Record a group's rewards at ``point``; True when the group had a learning signal."""
        ...


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (well-behaved at 0 and n; n=0: (0, 1))."""
    if n <= 0:
        return (0.0, 1.0)
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
