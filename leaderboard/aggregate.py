"""Board entries grouped into columns: one per environment build, never mixing builds.

A build is an (environment version, content hash) pair: two runs of the same version whose
package contents differ (code changed without a version bump) measured different graders or tasks,
so they get separate columns too. A column is *stale* when the board holds a newer build: a newer
version, or, within one version, a build whose runs started later. Rows of a column are ranked by
mean reward (best first; runs without a score last).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from leaderboard.board import BoardEntry

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

    @property
    def label(self) -> str:
        """``version``, or ``version (hash prefix)`` when the version alone is ambiguous."""
        if not self.shares_version:
            return self.env_version
        return f"{self.env_version} ({_short_hash(self.env_hash)})"


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


def _newest_first(builds: dict[tuple[str, str], list[BoardEntry]]) -> list[tuple[str, str]]:
    """Builds by version (newest first), and within a version by their latest run start."""
    latest = {b: max(r.created_at for r in rows) for b, rows in builds.items()}
    return sorted(builds, key=lambda b: (version_key(b[0]), latest[b]), reverse=True)


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


def aggregate(entries: Iterable[BoardEntry], *, env_id: str | None = None) -> list[EnvironmentBoard]:
    """Group entries by environment and build (version, hash); environments sorted by id,
    builds newest first."""
    by_env: dict[str, dict[tuple[str, str], list[BoardEntry]]] = {}
    for e in entries:
        if env_id is not None and e.env_id != env_id:
            continue
        by_env.setdefault(e.env_id, {}).setdefault((e.env_version, e.env_hash), []).append(e)
    boards: list[EnvironmentBoard] = []
    for eid in sorted(by_env):
        builds = by_env[eid]
        ordered = _newest_first(builds)
        versions = [v for v, _ in ordered]
        columns = tuple(
            Column(
                env_id=eid,
                env_version=v,
                env_hash=h,
                stale=i > 0,
                rows=tuple(sorted(builds[(v, h)], key=_rank_key)),
                shares_version=versions.count(v) > 1,
            )
            for i, (v, h) in enumerate(ordered)
        )
        boards.append(EnvironmentBoard(env_id=eid, columns=columns))
    return boards
