"""The leaderboard across environments: one row per model, one column per environment.

Each cell is the model's row in that environment's main ranking (its current build, the settings
with the most runs): mean reward, 95% interval and rank there, ties marked. Scores of different
environments are on different scales, so they are never averaged or ranked against each other;
rows are ordered by how many environments a model covers, then by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from leaderboard.aggregate import aggregate
from leaderboard.entry import BoardEntry
from leaderboard.html import Safe, join, link, table, tag
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD
from leaderboard.ranking import RunFilter, rank
from leaderboard.render import hub_badge

__all__ = ["CrossCell", "CrossColumn", "CrossTable", "cross_environment", "render_cross"]


@dataclass(frozen=True)
class CrossColumn:
    env_id: str
    env_version: str
    settings: str


@dataclass(frozen=True)
class CrossCell:
    rank_text: str
    mean_reward: float | None
    ci95: tuple[float, float] | None
    entry_id: str
    infra_flagged: bool
    hub_run: bool = False  #: the hub ran this run itself (``BoardEntry.origin``)


@dataclass(frozen=True)
class CrossTable:
    columns: tuple[CrossColumn, ...]
    rows: tuple[tuple[str, tuple[CrossCell | None, ...]], ...]
    """(model, one cell per column, None where the model has no run)."""


def cross_environment(
    entries: Iterable[BoardEntry],
    *,
    run_filter: RunFilter | None = None,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
) -> CrossTable:
    """Each model's place in each environment's main ranking (see the module doc)."""
    chosen = (run_filter or RunFilter()).apply(entries)
    columns: list[CrossColumn] = []
    cells: dict[str, dict[int, CrossCell]] = {}
    for env in aggregate(chosen):
        current = [c for c in env.columns if not c.stale]
        main = max(current, key=lambda c: len(c.rows))  # columns come newest first: ties keep it
        index = len(columns)
        columns.append(CrossColumn(env_id=env.env_id, env_version=main.env_version, settings=main.settings))
        for row in rank(main.rows, infra_threshold=infra_threshold).rows:
            model = row.entry.model
            if index in cells.get(model, {}):
                continue  # the model's best row (rows come best first)
            cells.setdefault(model, {})[index] = CrossCell(
                rank_text=row.rank_text,
                mean_reward=row.entry.mean_reward,
                ci95=row.entry.ci95,
                entry_id=row.entry.id,
                infra_flagged=row.infra.flagged,
                hub_run=row.entry.origin == "hub",
            )
    order = sorted(cells, key=lambda m: (-len(cells[m]), m))
    return CrossTable(
        columns=tuple(columns),
        rows=tuple((m, tuple(cells[m].get(i) for i in range(len(columns)))) for m in order),
    )


def render_cross(
    cross: CrossTable, *, env_href: Callable[[str], str], run_href: Callable[[str], str]
) -> Safe:
    """The table as an HTML fragment: ``mean (rank)`` per cell, linked to the run."""
    headers: list[object] = ["model"]
    headers += [
        join([link(env_href(c.env_id), c.env_id), tag("span", f" {c.env_version}", class_="tie")])
        for c in cross.columns
    ]
    rows: list[list[object]] = []
    for model, cells in cross.rows:
        row: list[object] = [model]
        for cell in cells:
            if cell is None:
                row.append("–")
                continue
            score = "–" if cell.mean_reward is None else f"{cell.mean_reward:.3f}"
            flag = tag("span", "infra", class_="flag") if cell.infra_flagged else ""
            row.append(
                join(
                    [
                        link(run_href(cell.entry_id), score),
                        f" (rank {cell.rank_text})",
                        " ",
                        flag,
                        hub_badge(cell.hub_run),
                    ]
                )
            )
        rows.append(row)
    note = tag(
        "p",
        "Each cell: mean reward and rank in that environment's current ranking (=n: tied). "
        "Scores of different environments are not comparable and are not averaged.",
        class_="note",
    )
    return join([table(headers, rows, nowrap=range(1, len(headers))), note])
