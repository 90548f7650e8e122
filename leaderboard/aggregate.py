"""Board entries grouped into columns: one per (environment, version), never mixing versions.

A column is *stale* when the board holds a newer version of the same environment: its numbers
were measured on different tasks or a different grader and are not comparable with the current
column. Rows of a column are ranked by mean reward (best first; runs without a score last).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from leaderboard.board import BoardEntry

__all__ = ["Column", "EnvironmentBoard", "aggregate", "version_key"]

_VERSION_RE = re.compile(r"^[vV]?(\d+(?:\.\d+)*)(.*)$")


@dataclass(frozen=True)
class Column:
    """The runs of one environment version, ranked."""

    env_id: str
    env_version: str
    stale: bool
    rows: tuple[BoardEntry, ...]

    @property
    def env_hashes(self) -> tuple[str, ...]:
        """Distinct environment content hashes among the rows (more than one is worth a look)."""
        return tuple(sorted({r.env_hash for r in self.rows}))


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


def _rank_key(entry: BoardEntry) -> tuple[bool, float, str, str]:
    score = entry.mean_reward
    return (score is None, -(score or 0.0), entry.model, entry.id)


def aggregate(entries: Iterable[BoardEntry], *, env_id: str | None = None) -> list[EnvironmentBoard]:
    """Group entries by environment and version; environments sorted by id."""
    by_env: dict[str, dict[str, list[BoardEntry]]] = {}
    for e in entries:
        if env_id is not None and e.env_id != env_id:
            continue
        by_env.setdefault(e.env_id, {}).setdefault(e.env_version, []).append(e)
    boards: list[EnvironmentBoard] = []
    for eid in sorted(by_env):
        versions = sorted(by_env[eid], key=version_key, reverse=True)
        columns = tuple(
            Column(
                env_id=eid,
                env_version=v,
                stale=i > 0,
                rows=tuple(sorted(by_env[eid][v], key=_rank_key)),
            )
            for i, v in enumerate(versions)
        )
        boards.append(EnvironmentBoard(env_id=eid, columns=columns))
    return boards
