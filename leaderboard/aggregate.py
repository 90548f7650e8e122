"""Board entries grouped into columns: one per environment build, never mixing builds, and
within a build one per settings (:func:`leaderboard.settings.settings_key`: split, environment
arguments such as a difficulty, task count, rollouts per task, sampling), which measure
different things.

A build is an (environment version, content hash) pair: two runs of the same version whose
package contents differ (code changed without a version bump) measured different graders or tasks,
so they get separate columns too. A column is *stale* when the board holds a newer build: a newer
version, or, within one version, a build whose runs started later. Rows of a column are ranked by
mean reward (best first; runs without a score last); :func:`leaderboard.ranking.rank` turns them
into the table (ties, merged identical runs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from leaderboard.entry import BoardEntry
from leaderboard.settings import run_shape, settings_key, settings_label

__all__ = ["Column", "EnvironmentBoard", "aggregate", "stale_reason", "version_key"]

_VERSION_RE = re.compile(r"^[vV]?(\d+(?:\.\d+)*)(.*)$")


@dataclass(frozen=True)
class Column:
    """The runs of one environment version, ranked."""

    env_id: str
    env_version: str
    env_hash: str
    stale: bool
    rows: tuple[BoardEntry, ...]
    shares_version: bool = False
    """True when another column of the board has the same version with a different hash."""
    split: str = ""
    """The split the runs of this column drew their tasks from."""
    env_args: str = "{}"
    """The arguments the environment was loaded with, as canonical JSON."""
    shares_build: bool = False
    """True when another column has the same build run with other settings."""
    settings: str = ""
    """The settings of its runs beyond the build (split, arguments, tasks x rollouts, sampling)."""
    shape_differs: str = ""
    """The parts of :func:`leaderboard.settings.run_shape` that differ between the columns of the
    build (``"8 tasks x 2"``), shown in the label; '' when only split or arguments differ."""

    @property
    def label(self) -> str:
        """``version``, plus the hash prefix when the version alone is ambiguous and the split and
        environment arguments when the build alone is."""
        text = self.env_version
        if self.shares_version:
            text += f" ({_short_hash(self.env_hash)})"
        if self.shares_build:
            text += f" [{self.variant}]"
        return text

    @property
    def variant(self) -> str:
        """``split=..., arg=value, ...`` and differing shape: what sets this column apart from others
        of its build."""
        args = json.loads(self.env_args) if self.env_args else {}
        parts = [f"split={self.split}"] + [f"{k}={json.dumps(v)}" for k, v in args.items()]
        return ", ".join(parts + ([self.shape_differs] if self.shape_differs else []))


@dataclass(frozen=True)
class EnvironmentBoard:
    """All columns of one environment, newest version first."""

    env_id: str
    columns: tuple[Column, ...]

    @property
    def current(self) -> Column:
        return self.columns[0]

    @property
    def n_runs(self) -> int:
        return sum(len(c.rows) for c in self.columns)


def version_key(version: str) -> tuple[tuple[int, ...], bool, str]:
    """Sort key ordering versions like ``0.9 < 0.10 < 1.0.0rc1 < 1.0.0``.

    The numeric release is compared as numbers; a suffix (``rc1``, ``-beta``) marks a pre-release,
    which sorts before the plain release. A version with no leading number sorts first.
    """
    m = _VERSION_RE.match(version.strip())
    if m is None:
        return ((), False, version)
    release = tuple(int(p) for p in m.group(1).split("."))
    suffix = m.group(2)
    return (release, suffix == "", suffix)


def _short_hash(env_hash: str) -> str:
    return env_hash.split(":", 1)[-1][:10]


_Build = tuple[str, str]
_Key = tuple[str, str, str, str, str]  # version, hash, split, canonical env_args, settings key


def _newest_first(columns: dict[_Key, list[BoardEntry]]) -> list[_Key]:
    """Builds by version (newest first), within a version by their latest run start; the columns
    of one build (other splits or arguments) by their number of runs, then their latest run."""
    build_latest: dict[_Build, float] = {}
    for (v, h, *_), rows in columns.items():
        latest = max(r.created_at for r in rows)
        build_latest[(v, h)] = max(build_latest.get((v, h), latest), latest)

    def key(k: _Key) -> tuple[object, ...]:
        rows = columns[k]
        return (
            version_key(k[0]),
            build_latest[(k[0], k[1])],
            k[1],
            len(rows),
            max(r.created_at for r in rows),
        )

    return sorted(columns, key=key, reverse=True)


def _canonical_args(entry: BoardEntry) -> str:
    """The arguments that set a column apart: where a local copy of the data lives does not (the
    same rows from an environment variable or from ``path=...`` are one column), the data does."""
    args = {k: v for k, v in (entry.env_args or {}).items() if k not in entry.location_args}
    if entry.data_sha256 is not None:
        args["data"] = entry.data_sha256[:19]
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


def stale_reason(col: Column, env: EnvironmentBoard) -> str:
    """Why ``col`` is not the current column of ``env`` (empty when it is)."""
    if not col.stale:
        return ""
    if env.current.env_version != col.env_version:
        return f"v{env.current.env_version} is newer"
    return f"a newer build of v{col.env_version} ({_short_hash(env.current.env_hash)}) was run"


def _rank_key(entry: BoardEntry) -> tuple[bool, float, str, str]:
    score = entry.mean_reward
    return (score is None, -(score or 0.0), entry.model, entry.id)


def _differing(shapes: dict[_Key, list[str]], key: _Key) -> str:
    """The parts of ``key``'s run shape that some other column of its build does not share."""
    others = [s for k, s in shapes.items() if k[:2] == key[:2] and k != key]
    return ", ".join(p for p in shapes[key] if any(p not in s for s in others))


def aggregate(entries: Iterable[BoardEntry], *, env_id: str | None = None) -> list[EnvironmentBoard]:
    """Group entries by environment, build (version, hash), split and environment arguments;
    environments sorted by id, builds newest first. Every column of an older build is stale."""
    by_env: dict[str, dict[_Key, list[BoardEntry]]] = {}
    for e in entries:
        if env_id is not None and e.env_id != env_id:
            continue
        key = (e.env_version, e.env_hash, e.split, _canonical_args(e), settings_key(e))
        by_env.setdefault(e.env_id, {}).setdefault(key, []).append(e)
    boards: list[EnvironmentBoard] = []
    for eid in sorted(by_env):
        variants = by_env[eid]
        ordered = _newest_first(variants)
        current = ordered[0][:2]
        builds = [k[:2] for k in ordered]
        shapes = {k: run_shape(variants[k][0]) for k in ordered}
        versions = {b: len({h for v, h in builds if v == b[0]}) for b in builds}
        columns = tuple(
            Column(
                env_id=eid,
                env_version=v,
                env_hash=h,
                stale=(v, h) != current,
                rows=tuple(sorted(variants[(v, h, split, args, skey)], key=_rank_key)),
                shares_version=versions[(v, h)] > 1,
                split=split,
                env_args=args,
                shares_build=builds.count((v, h)) > 1,
                settings=settings_label(variants[(v, h, split, args, skey)][0]),
                shape_differs=_differing(shapes, (v, h, split, args, skey)),
            )
            for v, h, split, args, skey in ordered
        )
        boards.append(EnvironmentBoard(env_id=eid, columns=columns))
    return boards
