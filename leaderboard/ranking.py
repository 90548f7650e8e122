"""Rankings: which runs share a table, how they are ordered, and when they are tied.

The rules (``docs/leaderboard.md``):

- runs are ranked together only when their settings match (:func:`leaderboard.settings.settings_key`:
  environment build, split, arguments, task count, rollouts, sampling); :func:`rankings` makes one
  table per settings, and mixes them only when the caller asks (``compare=True``);
- identical runs (same model, label, owner, settings and results) are one row that says how many
  runs it stands for, never two rows told apart by hash fragments;
- runs whose 95% intervals overlap are tied: every group of runs connected by overlapping
  intervals shares one rank (``=2``), so no ranking claims a difference the intervals do not show;
- a run with a human label is shown by its label; rows of one model are otherwise told apart by
  seed, run date or owner;
- :class:`RunFilter` selects runs by model, owner and date before ranking.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from leaderboard.entry import BoardEntry
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD, InfraCheck, infra_check
from leaderboard.settings import settings_key, settings_label

__all__ = [
    "MixedSettingsError",
    "RankedRow",
    "Ranking",
    "RunFilter",
    "merge_identical",
    "rank",
    "rankings",
    "row_names",
]


class MixedSettingsError(ValueError):
    """Runs of different settings were given to one ranking without ``compare=True``."""


@dataclass(frozen=True)
class RunFilter:
    """Which runs to show: empty sets mean any; dates are Unix times of the run start, inclusive."""

    models: frozenset[str] = field(default_factory=frozenset)
    owners: frozenset[str] = field(default_factory=frozenset)
    since: float | None = None
    until: float | None = None

    def matches(self, entry: BoardEntry) -> bool:
        return (
            (not self.models or entry.model in self.models)
            and (not self.owners or (entry.owner or "") in self.owners)
            and (self.since is None or entry.created_at >= self.since)
            and (self.until is None or entry.created_at <= self.until)
        )

    def apply(self, entries: Iterable[BoardEntry]) -> list[BoardEntry]:
        return [e for e in entries if self.matches(e)]


@dataclass(frozen=True)
class RankedRow:
    """One row: a run, or several identical runs shown once."""

    rank: int | None
    """1 + the number of runs ranked clearly above (None: no score)."""
    tied: bool
    """Shares its rank with another row (their intervals overlap, directly or through others)."""
    name: str
    entries: tuple[BoardEntry, ...]
    infra: InfraCheck

    @property
    def entry(self) -> BoardEntry:
        return self.entries[0]

    @property
    def rank_text(self) -> str:
        """``1``, ``=2`` when tied, ``–`` without a score."""
        if self.rank is None:
            return "–"
        return f"={self.rank}" if self.tied else str(self.rank)


@dataclass(frozen=True)
class Ranking:
    """One table: runs of one settings key (or, with ``compare``, of several)."""

    settings: str
    """A human description of the shared settings ('' when mixed)."""
    mixed: bool
    rows: tuple[RankedRow, ...]


def _interval(e: BoardEntry) -> tuple[float, float] | None:
    if e.mean_reward is None:
        return None
    return e.ci95 if e.ci95 is not None else (e.mean_reward, e.mean_reward)


def _identity(e: BoardEntry) -> tuple[object, ...]:
    return (
        e.model,
        e.label,
        e.owner,
        settings_key(e),
        e.mean_reward,
        e.ci95,
        tuple(sorted(e.pass_at_k.items())),
        tuple(sorted(e.pass_all_k.items())),
        e.n_errors,
        e.n_rollouts,
        tuple(sorted(e.usage.items())),
    )


def merge_identical(entries: Iterable[BoardEntry]) -> list[tuple[BoardEntry, ...]]:
    """Group runs with the same model, label, owner, settings and results (first seen first)."""
    groups: dict[tuple[object, ...], list[BoardEntry]] = {}
    for e in entries:
        groups.setdefault(_identity(e), []).append(e)
    return [tuple(sorted(g, key=lambda x: (x.created_at, x.id))) for g in groups.values()]


def _date(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def row_names(groups: Sequence[tuple[BoardEntry, ...]], mixed: bool) -> list[str]:
    """Labels first; a model name shared by several rows gets what sets each apart."""
    base = [g[0].label or g[0].model for g in groups]
    names = list(base)
    for name in set(base):
        same = [i for i, b in enumerate(base) if b == name]
        if len(same) < 2:
            continue
        reps = [groups[i][0] for i in same]
        for distinguish in (
            (lambda e: settings_label(e)) if mixed else None,
            (lambda e: f"{e.env_version}, {settings_label(e)}") if mixed else None,
            lambda e: f"seed {e.seed}",
            lambda e: _date(e.created_at),
            lambda e: f"by {e.owner}" if e.owner else "",
        ):
            if distinguish is None:
                continue
            tags = [distinguish(e) for e in reps]
            if len(set(tags)) == len(tags):
                for i, t in zip(same, tags, strict=True):
                    names[i] = f"{name} ({t})"
                break
        else:
            for n, i in enumerate(same, 1):
                names[i] = f"{name} (run {n} of {len(same)})"
    return names


def rank(
    entries: Iterable[BoardEntry],
    *,
    compare: bool = False,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
    infra_kinds: Collection[str] | None = None,
) -> Ranking:
    """Rank ``entries`` (all of one settings key, unless ``compare``): best mean first, identical
    runs merged, overlapping intervals tied. Raises :class:`MixedSettingsError` for mixed settings
    without ``compare``."""
    items = list(entries)
    keys = {settings_key(e) for e in items}
    if len(keys) > 1 and not compare:
        raise MixedSettingsError(
            f"these {len(items)} runs have {len(keys)} different settings (version, split, tasks, "
            "rollouts or sampling); rank each group apart, or pass compare=True to compare them"
        )
    groups = merge_identical(items)
    groups.sort(key=lambda g: (g[0].mean_reward is None, -(g[0].mean_reward or 0.0), g[0].model, g[0].id))
    names = row_names(groups, mixed=len(keys) > 1)
    intervals = [_interval(g[0]) for g in groups]
    # connected components of the overlap graph: walk the intervals by their upper end, highest
    # first; one that ends below every lower end of the current component starts the next one
    scored = sorted(((i, iv) for i, iv in enumerate(intervals) if iv is not None), key=lambda p: -p[1][1])
    component: dict[int, int] = {}
    comps: list[list[int]] = []
    low = float("inf")
    for i, iv in scored:
        if not comps or iv[1] < low:
            comps.append([])
            low = iv[0]
        comps[-1].append(i)
        component[i] = len(comps) - 1
        low = min(low, iv[0])
    ranks: list[int] = []
    before = 0
    for comp in comps:
        ranks.append(before + 1)
        before += len(comp)
    rows = tuple(
        RankedRow(
            rank=ranks[component[i]] if i in component else None,
            tied=i in component and len(comps[component[i]]) > 1,
            name=names[i],
            entries=g,
            infra=infra_check(g[0], threshold=infra_threshold, kinds=infra_kinds),
        )
        for i, g in enumerate(groups)
    )
    settings = "" if len(keys) != 1 or not items else settings_label(items[0])
    return Ranking(settings=settings, mixed=len(keys) > 1, rows=rows)


def rankings(
    entries: Iterable[BoardEntry],
    *,
    run_filter: RunFilter | None = None,
    compare: bool = False,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
) -> list[Ranking]:
    """The filtered runs as tables: one per settings key, the one with most runs first (then the
    latest); with ``compare``, a single table of all of them."""
    items = (run_filter or RunFilter()).apply(entries)
    if not items:
        return []
    if compare:
        return [rank(items, compare=True, infra_threshold=infra_threshold)]
    by_key: dict[str, list[BoardEntry]] = {}
    for e in items:
        by_key.setdefault(settings_key(e), []).append(e)
    order = sorted(by_key.values(), key=lambda g: (-len(g), -max(e.created_at for e in g)))
    return [rank(g, infra_threshold=infra_threshold) for g in order]
