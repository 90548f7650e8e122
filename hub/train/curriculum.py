"""An online curriculum: the next tasks come from the difficulty points where the model learns.

::

    cur = Curriculum(env.difficulty_space(), seed=0)
    tasks = cur.next_tasks(env, 8)                   # mostly at the current point, some either side
    cur.observe(task.metadata[POINT_KEY], rewards)   # one call per group (a task's rollouts)

The curriculum moves up (down) the space's ladder when the Wilson interval of the current point's
recent pass rate lies wholly above (below) the band, by default ``verihub calibrate``'s learnable
band; tasks are drawn from the current rung and its neighbours, a neighbour whose groups had no
variance (no GRPO signal) less often. The knobs are :class:`CurriculumConfig`'s; the rules in
full: docs/training.md. The object pickles, and :meth:`Curriculum.state_dict` /
:meth:`Curriculum.load_state_dict` round-trip it through JSON for a trainer's checkpoint.
"""

from __future__ import annotations

import itertools
import random
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hub.env import DifficultySpace, Environment, Level, Point, Task, UsageError, wilson_interval

__all__ = ["DEFAULT_BAND", "Curriculum", "CurriculumConfig", "Move", "has_signal", "require_difficulty"]

DEFAULT_BAND: tuple[float, float] = (1 / 64, 0.7)
"""``verihub calibrate``'s learnable band (``hub.review.calibrate.LEARNABLE_BAND``; a test keeps
the two equal: this room may not import ``hub.review``)."""


def has_signal(rewards: Sequence[float | None], eps: float = 0.05) -> bool:
    """The advantage gate: does a group's reward vary (some advantage beyond ``eps``)?

    Ungraded entries (None) are left out; a group of fewer than two rewards has no signal.
    """
    values = [r for r in rewards if r is not None]
    if len(values) < 2:
        return False
    mean = sum(values) / len(values)
    return any(abs(v - mean) > eps for v in values)


def require_difficulty(env: Environment) -> None:
    """Refuse, in one line, an environment that declares no difficulty space."""
    if not env.difficulty_space().axes:
        raise UsageError(
            f"{env.id} declares no difficulty space, so a curriculum has no levels to move between; "
            "drop --curriculum, or use an environment that declares one (arith, textops)"
        )


@dataclass(frozen=True)
class CurriculumConfig:
    """The rules of a :class:`Curriculum` (each field in docs/training.md)."""

    band: tuple[float, float] = DEFAULT_BAND
    z: float = 1.96
    """Wilson interval width (1.96: 95%)."""
    min_samples: int = 16
    """Outcomes at the current point since the last move before another move."""
    window: int = 64
    """Outcomes per point the pass rate is measured over (the most recent)."""
    step: int = 1
    """Rungs per move."""
    mix: tuple[float, float, float] = (0.15, 0.7, 0.15)
    """Draw weights of the rung below, the current rung and the rung above."""
    pass_threshold: float = 1.0
    gate_eps: float = 0.05
    flat_weight: float = 0.25
    """Weight factor of a neighbouring rung whose last ``flat_groups`` groups had no signal."""
    flat_groups: int = 4

    def __post_init__(self) -> None:
        low, high = self.band
        if not 0.0 <= low < high <= 1.0:
            raise UsageError(f"curriculum band must satisfy 0 <= low < high <= 1, got {self.band}")
        if self.min_samples < 1 or self.window < self.min_samples:
            raise UsageError("curriculum needs min_samples >= 1 and window >= min_samples")
        if self.step < 1 or self.flat_groups < 1 or self.z <= 0:
            raise UsageError("curriculum step, flat_groups and z must be positive")
        if len(self.mix) != 3 or min(self.mix) < 0 or self.mix[1] <= 0:
            raise UsageError("curriculum mix is (below, current, above) weights, current > 0")
        if not 0.0 <= self.flat_weight <= 1.0:
            raise UsageError("curriculum flat_weight must lie in [0, 1]")


@dataclass
class _Rung:
    outcomes: deque[int]
    recent_signal: deque[bool]
    groups: int = 0
    flat: int = 0
    observed: int = 0

    def pass_rate(self) -> float | None:
        return sum(self.outcomes) / len(self.outcomes) if self.outcomes else None


@dataclass(frozen=True)
class Move:
    """One move of the curriculum: after ``observed`` outcomes in all, from rung to rung."""

    observed: int
    src: str
    dst: str
    pass_rate: float
    interval: tuple[float, float]


@dataclass
class Curriculum:
    """Chooses difficulty points from observed outcomes (see the module docstring)."""

    space: DifficultySpace
    config: CurriculumConfig = field(default_factory=CurriculumConfig)
    seed: int = 0

    def __post_init__(self) -> None:
        self._ladder = [self.space.label(p) for p in self.space.ladder()]
        self.current = self._ladder.index(self.space.label(self.space.start_point()))
        self._rungs = [self._new_rung() for _ in self._ladder]
        self._rng = random.Random(self.seed)
        self.since_move = 0
        self.observed = 0
        self.moves: list[Move] = []
        self._drawn: dict[str, int] = {}
        self._streams: dict[str, Iterator[Task]] = {}

    def _new_rung(self) -> _Rung:
        return _Rung(deque(maxlen=self.config.window), deque(maxlen=self.config.flat_groups))

    # -- reading ---------------------------------------------------------------------------------
    @property
    def ladder(self) -> list[str]:
        """The rungs' labels, easiest first."""
        return list(self._ladder)

    @property
    def level(self) -> str:
        """The current rung's label (``level=2``)."""
        return self._ladder[self.current]

    def point(self) -> dict[str, Level]:
        """The current point."""
        return self.space.parse(self.level)

    def pass_rates(self) -> dict[str, float | None]:
        """Each rung's pass rate over its window (None: nothing observed there)."""
        return {label: rung.pass_rate() for label, rung in zip(self._ladder, self._rungs, strict=True)}

    def flat_share(self) -> float | None:
        """The share of all groups observed that had no signal (None before any group)."""
        groups = sum(r.groups for r in self._rungs)
        return sum(r.flat for r in self._rungs) / groups if groups else None

    # -- learning --------------------------------------------------------------------------------
    def observe(self, point: Point, rewards: Sequence[float | None]) -> bool:
        """Record one group (a task's rollouts) at ``point``; returns the advantage gate's verdict.

        A point off the ladder is ignored (returns the gate's verdict all the same); ungraded
        rewards (None) are left out.
        """
        signal = has_signal(rewards, self.config.gate_eps)
        try:
            index = self._ladder.index(self.space.label(point))
        except (ValueError, UsageError):
            return signal
        values = [r for r in rewards if r is not None]
        rung = self._rungs[index]
        rung.groups += 1
        rung.flat += 0 if signal else 1
        rung.recent_signal.append(signal)
        for v in values:
            rung.outcomes.append(1 if v >= self.config.pass_threshold else 0)
        rung.observed += len(values)
        self.observed += len(values)
        if index == self.current:
            self.since_move += len(values)
            self._maybe_move()
        return signal

    def _maybe_move(self) -> None:
        cfg = self.config
        rung = self._rungs[self.current]
        if self.since_move < cfg.min_samples or not rung.outcomes:
            return
        n = len(rung.outcomes)
        passed = sum(rung.outcomes)
        low, high = wilson_interval(passed, n, cfg.z)
        target = self.current
        if low > cfg.band[1]:
            target = min(len(self._ladder) - 1, self.current + cfg.step)
        elif high < cfg.band[0]:
            target = max(0, self.current - cfg.step)
        if target != self.current:
            self.moves.append(Move(self.observed, self.level, self._ladder[target], passed / n, (low, high)))
            self.current = target
            self.since_move = 0

    # -- choosing --------------------------------------------------------------------------------
    def weights(self) -> dict[str, float]:
        """The draw weights of the rungs now (they sum to 1)."""
        below, here, above = self.config.mix
        raw: dict[int, float] = {self.current: here}
        for index, weight in ((self.current - 1, below), (self.current + 1, above)):
            if 0 <= index < len(self._ladder) and weight > 0:
                rung = self._rungs[index]
                flat = len(rung.recent_signal) == self.config.flat_groups and not any(rung.recent_signal)
                raw[index] = weight * (self.config.flat_weight if flat else 1.0)
        total = sum(raw.values())
        return {self._ladder[i]: w / total for i, w in sorted(raw.items())}

    def next_points(self, n: int) -> list[dict[str, Level]]:
        """``n`` points drawn by :meth:`weights` (seeded: the same state draws the same points)."""
        weights = self.weights()
        labels = self._rng.choices(list(weights), weights=list(weights.values()), k=n)
        return [self.space.parse(label) for label in labels]

    def next_tasks(self, env: Environment, n: int, *, split: str = "train", seed: int = 0) -> list[Task]:
        """The next ``n`` tasks of ``env``: points drawn by :meth:`next_points`, each point's
        tasks taken in order without repeats (``env.tasks_at``)."""
        out = []
        for point in self.next_points(n):
            key = f"{split}:{seed}:{self.space.label(point)}"
            stream = self._streams.get(key)
            if stream is None:
                skip = self._drawn.get(key, 0)
                stream = itertools.islice(env.tasks_at(point, split, seed=seed), skip, None)
                self._streams[key] = stream
            out.append(next(stream))
            self._drawn[key] = self._drawn.get(key, 0) + 1
        return out

    # -- saving ----------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_streams"] = {}  # generators do not pickle; rebuilt by skipping what was drawn
        return state

    def state_dict(self) -> dict[str, Any]:
        """The curriculum's state as JSON-able data (with :meth:`load_state_dict`)."""
        version, internal, gauss = self._rng.getstate()
        return {
            "ladder": list(self._ladder),
            "config": asdict(self.config),
            "current": self.current,
            "since_move": self.since_move,
            "observed": self.observed,
            "rungs": [
                {
                    "outcomes": list(r.outcomes),
                    "recent_signal": list(r.recent_signal),
                    "groups": r.groups,
                    "flat": r.flat,
                    "observed": r.observed,
                }
                for r in self._rungs
            ],
            "moves": [asdict(m) for m in self.moves],
            "drawn": dict(self._drawn),
            "rng": [version, list(internal), gauss],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (the space and config must be the same)."""
        if list(state["ladder"]) != self._ladder:
            raise UsageError("the saved curriculum has another difficulty ladder; it cannot be restored here")
        saved = dict(state["config"])
        saved["band"], saved["mix"] = tuple(saved["band"]), tuple(saved["mix"])
        if saved != asdict(self.config):
            raise UsageError("the saved curriculum has other rules (config); build it with the same config")
        self.current = int(state["current"])
        self.since_move = int(state["since_move"])
        self.observed = int(state["observed"])
        self._rungs = []
        for r in state["rungs"]:
            rung = self._new_rung()
            rung.outcomes.extend(int(x) for x in r["outcomes"])
            rung.recent_signal.extend(bool(x) for x in r["recent_signal"])
            rung.groups, rung.flat, rung.observed = int(r["groups"]), int(r["flat"]), int(r["observed"])
            self._rungs.append(rung)
        self.moves = [
            Move(m["observed"], m["src"], m["dst"], m["pass_rate"], (m["interval"][0], m["interval"][1]))
            for m in state["moves"]
        ]
        self._drawn = {str(k): int(v) for k, v in state["drawn"].items()}
        self._streams = {}
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))
