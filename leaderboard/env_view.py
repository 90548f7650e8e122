"""An environment's rankings as an HTML fragment: the static site's environment page, and the hub
server's environment leaderboard.

Columns come from :func:`leaderboard.aggregate.aggregate` (one per build and settings, stale ones
marked), rows from :func:`leaderboard.ranking.rank` (ties, identical runs merged, the
infrastructure-error flag); each column has three plots (scores with intervals, pass@k, the
pass-rate histogram) or the reason one is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hub.run import Summary
from leaderboard.aggregate import Column, EnvironmentBoard, stale_reason
from leaderboard.html import Safe, join, link, tag
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD
from leaderboard.plots import EMPTY_REASONS, Series, pass_at_k_plot, pass_rate_histogram, scores_plot
from leaderboard.ranking import rank
from leaderboard.render import RowOrder, plot_figure, render_ranking

__all__ = ["render_environment"]

_MAX_LINES = 8  # runs drawn in the pass@k and histogram plots (all runs are in the scores plot)


def _stale_badge(col: Column, env: EnvironmentBoard) -> Safe:
    if not col.stale:
        return Safe("")
    return tag("span", f"stale: {stale_reason(col, env)}", class_="stale")


# -- pages ---------------------------------------------------------------------------------------


def _series(col: Column, names: dict[str, str], summaries: Mapping[str, Summary]) -> list[Series]:
    out = []
    for e in col.rows:
        if e.id not in names:
            continue  # an identical run shown once
        rates = tuple(t.pass_rate for t in summaries[e.id].per_task if t.pass_rate is not None)
        out.append(
            Series(
                label=names[e.id],
                mean=e.mean_reward,
                ci95=e.ci95,
                pass_at_k=e.pass_at_k,
                task_pass_rates=rates,
            )
        )
    return out


def render_environment(
    env: EnvironmentBoard,
    summaries: Mapping[str, Summary],
    *,
    run_href: Callable[[str], str],
    card_href: Callable[[str, str], str] | None = None,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
    order: RowOrder | None = None,
) -> Safe:
    """Every column of ``env`` (newest build first, stale ones marked): its settings, its ranking
    and three plots. ``summaries`` are the verified summaries by entry id; ``run_href(entry_id)``
    and ``card_href(env_id, env_version)`` make the links; ``order`` sorts each ranking's rows."""
    parts: list[object] = []
    for ci, col in enumerate(env.columns):
        ranking = rank(col.rows, infra_threshold=infra_threshold)
        names = {r.entry.id: r.name for r in ranking.rows}
        series = _series(col, names, summaries)
        top = f", top {_MAX_LINES} runs" if len(series) > _MAX_LINES else ""
        salt = f"{env.env_id}-{ci}"
        plots = tag(
            "div",
            plot_figure(
                "Mean reward, 95% bootstrap interval",
                scores_plot(series, salt=salt + "-s"),
                EMPTY_REASONS["scores"],
            ),
            plot_figure(
                "pass@k" + top,
                pass_at_k_plot(series[:_MAX_LINES], salt=salt + "-k"),
                EMPTY_REASONS["pass_at_k"],
            ),
            plot_figure(
                "Per-task difficulty (pass-rate histogram)" + top,
                pass_rate_histogram(series[:_MAX_LINES], salt=salt + "-h"),
                EMPTY_REASONS["histogram"],
            ),
            class_="plots",
        )
        note = (
            tag(
                "p",
                f"Note: version {col.env_version} was run with more than one package content; "
                f"this column holds the runs of hash {col.env_hash}.",
            )
            if col.shares_version
            else ""
        )
        parts.append(
            tag(
                "section",
                tag("h2", f"version {col.label} ", _stale_badge(col, env)),
                note,
                tag(
                    "p",
                    f"Settings: {col.settings}. ",
                    link(card_href(env.env_id, col.env_version), "Eval card of this version")
                    if card_href is not None
                    else "",
                    class_="note",
                ),
                render_ranking(ranking, run_href=run_href, order=order),
                plots,
                class_="column stale" if col.stale else "column",
                id=f"v{col.env_version}-{ci}"
                if col.shares_version or col.shares_build
                else f"v{col.env_version}",
            )
        )
    return join(parts)
