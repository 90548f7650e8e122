"""HTML fragments of an eval card and of a ranking, shared by the static site and the hub server.

Each function returns :class:`leaderboard.html.Safe` markup built only through the escaping helpers
(model names, labels, owners and environment ids are hostile text), with inline SVG plots.
Links are made by the caller (``run_href``), so the site can use relative file names and the server
its own routes. The classes used are styled by :data:`FRAGMENT_CSS` (part of every site page; the
server includes it in its own pages).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Sequence

from hub.review import in_band
from leaderboard.card import EvalCard, ModelResult
from leaderboard.html import Safe, join, link, table, tag
from leaderboard.plots import (
    EMPTY_REASONS,
    Series,
    band_plot,
    pass_rate_histogram,
    scores_plot,
)
from leaderboard.ranking import RankedRow, Ranking
from leaderboard.settings import settings_label

__all__ = [
    "FRAGMENT_CSS",
    "HUB_RUN_BADGE",
    "RowOrder",
    "fmt",
    "hub_badge",
    "plot_figure",
    "render_card",
    "render_ranking",
]

#: The mark of a run the hub ran itself (``BoardEntry.origin == "hub"``).
HUB_RUN_BADGE = "run by the hub"

FRAGMENT_CSS = """
.scroll{overflow-x:auto;max-width:100%}
.flag{color:#8a1c1c;background:#fde8e8;padding:0 .3rem;border-radius:3px;font-size:.8rem;white-space:nowrap}
.tie{color:#555;font-size:.8rem}
.hubrun{color:#0a3069;background:#ddf4ff;padding:0 .3rem;border-radius:3px;font-size:.8rem;white-space:nowrap}
.empty{color:#555;font-style:italic;border:1px dashed #bbb;padding:1rem;border-radius:4px}
.note{color:#444;font-size:.9rem}
ul.tasks{columns:14em;font-size:.85rem;padding-left:1.2rem}
"""

_MAX_LISTED = 60
_MAX_PLOTTED = 8


def fmt(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals, ``–`` for none."""
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _top_k(values: dict[str, float]) -> str:
    if not values:
        return "–"
    k = max(values, key=int)
    return f"{values[k]:.3f} (k={k})"


def _cost(cost: float | None) -> str:
    return "–" if cost is None else f"${cost:.4f}"


def _errors(
    n_errors: int,
    n_rollouts: int,
    by_kind: dict[str, int],
    flagged: bool,
    note: str,
    grader_failures: int = 0,
) -> Safe:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(by_kind.items()) if v)
    text = f"{n_errors} of {n_rollouts}" + (f" ({kinds})" if kinds else "")
    parts: list[object] = [text]
    if grader_failures:
        title = "responses the grader raised on: scored 0 and counted in the mean"
        parts += [" ", tag("span", f"{grader_failures} grader failures", class_="flag", title=title)]
    if flagged:
        parts += [" ", tag("span", "high infra errors", class_="flag", title=note)]
    return join(parts)


def plot_figure(caption: str, svg: str | None, reason: str) -> Safe:
    """A captioned plot, or the caption and the reason there is none."""
    inner = tag("div", Safe(svg), class_="plot") if svg is not None else tag("p", reason, class_="empty")
    return tag("figure", tag("figcaption", caption), inner)


def _series(card: EvalCard) -> list[Series]:
    return [
        Series(
            label=m.name,
            mean=m.mean_reward,
            ci95=m.ci95,
            pass_at_k=m.pass_at_k,
            task_pass_rates=tuple(p for _, p in m.task_pass_rates),
        )
        for m in card.models
    ]


def _band_text(band: tuple[float, float]) -> str:
    return f"at least one pass, {band[0]:.1%} ≤ pass rate ≤ {band[1]:.0%}"


def _task_list(title: str, ids: Sequence[str]) -> Safe:
    if not ids:
        return tag("p", f"{title}: none.")
    shown = ids[:_MAX_LISTED]
    more = f" (first {_MAX_LISTED} shown)" if len(ids) > _MAX_LISTED else ""
    return join(
        [
            tag("p", f"{title}: {len(ids)}{more}"),
            tag("ul", *(tag("li", tag("code", i)) for i in shown), class_="tasks"),
        ]
    )


_Exports = Callable[[ModelResult], Sequence[tuple[str, str]]]


def _env_args(args: dict[str, object]) -> Safe | str:
    """The environment arguments unfolded, one ``name = value`` (JSON) per line; ``none``."""
    if not args:
        return "none"
    return join(
        tag("div", tag("code", f"{k} = {json.dumps(v, default=str)}")) for k, v in sorted(args.items())
    )


def _settings_table(card: EvalCard) -> Safe:
    """One row per model: every sampling field (unset: server default; the seed the run's),
    tasks x rollouts, split and the environment arguments."""
    fields = list(dict.fromkeys(name for m in card.models for name, _ in m.sampling))
    rows = []
    for m in card.models:
        values = dict(m.sampling)
        rows.append(
            [
                m.name,
                *(values.get(f, "–") for f in fields),
                f"{m.n_tasks} x {m.rollouts_per_task}",
                m.split or "–",
                _env_args(m.env_args),
            ]
        )
    return table(["model", *fields, "tasks x rollouts", "split", "environment arguments"], rows)


def _difficulty_table(card: EvalCard, export_href: _Exports | None) -> Safe:
    """One row per model: graded tasks, tasks at 0% and at 100%, the learnable band, downloads."""
    rows = []
    for m in card.models:
        links = [link(href, text) for text, href in export_href(m)] if export_href is not None else []
        rows.append(
            [
                m.name,
                len(m.task_pass_rates),
                len(m.zero_tasks),
                len(m.full_tasks),
                len(m.learnable_tasks),
                len(m.ungraded_tasks),
                join(links, " · ") if links else "–",
            ]
        )
    headers = ["model", "graded tasks", "at 0%", "at 100%", "learnable", "all errored", "band export"]
    return table(headers, rows, numeric=(1, 2, 3, 4, 5))


def _model_details(m: ModelResult) -> Safe:
    """The pass-rate histogram of one model as a table, and its 0% and 100% tasks, folded."""
    flags = {"zero": "never passed", "full": "always passed"}
    hist_rows = [[b.label, b.count, flags.get(b.kind, "")] for b in m.histogram]
    return tag(
        "details",
        tag("summary", m.name, f": {len(m.zero_tasks)} at 0%, {len(m.full_tasks)} at 100%"),
        tag(
            "p",
            f"model {m.model}",
            f" · owner {m.owner}" if m.owner else "",
            f" · {m.settings}",
            class_="note",
        ),
        table(["pass rate", "tasks", "flag"], hist_rows, numeric=(1,)),
        _task_list("Tasks at 0% (no rollout passed)", m.zero_tasks),
        _task_list("Tasks at 100% (every rollout passed)", m.full_tasks),
    )


def render_card(
    card: EvalCard,
    *,
    run_href: Callable[[str], str] | None = None,
    export_href: _Exports | None = None,
    salt: str = "card",
) -> Safe:
    """The eval card as an HTML fragment: the results table, the three plots, the sampling settings
    of every model, the difficulty table (0%, 100%, learnable) and per model its histogram and
    flagged tasks (folded). ``run_href(entry_id)`` links a row to
    its run; ``export_href(row)`` gives (text, href) download links for its band export."""
    if not card.models:
        return tag("p", f"No runs of {card.env_id} {card.env_version} yet.", class_="empty")
    rows = []
    for m in card.models:
        name: object = m.name if run_href is None else link(run_href(m.entry_ids[0]), m.name)
        runs = f" ×{len(m.entry_ids)} identical runs" if len(m.entry_ids) > 1 else ""
        rows.append(
            [
                join([name, tag("span", runs, class_="tie") if runs else ""]),
                fmt(m.mean_reward),
                _ci(m.ci95),
                _top_k(m.pass_at_k),
                _top_k(m.pass_all_k),
                _errors(
                    m.n_errors,
                    m.n_rollouts,
                    m.errors_by_kind,
                    m.infra_flagged,
                    m.infra_note,
                    grader_failures=m.grader_failures,
                ),
                m.usage.get("total_tokens", 0),
                _cost(m.cost_usd),
                f"{m.n_tasks} x {m.rollouts_per_task}",
            ]
        )
    series = _series(card)
    band = card.band
    plots = tag(
        "div",
        plot_figure(
            "Mean reward by model, 95% interval",
            scores_plot(series, salt=salt + "-s"),
            EMPTY_REASONS["scores"],
        ),
        plot_figure(
            "Per-task pass rates (0% and 100% at the ends, learnable band shaded)",
            pass_rate_histogram(series[:_MAX_PLOTTED], salt=salt + "-h", band=band),
            EMPTY_REASONS["histogram"],
        ),
        plot_figure(
            "Calibration: tasks by pass rate against the learnable band",
            band_plot(series[:_MAX_PLOTTED], salt=salt + "-b", band=band, in_band=_in_band(band)),
            EMPTY_REASONS["band"],
        ),
        class_="plots",
    )
    notes: list[object] = []
    if card.all_zero:
        notes.append(tag("p", "Every model scored 0 on this version.", class_="empty"))
    if len(card.env_hashes) > 1:
        notes.append(
            tag("p", f"Runs of this version used {len(card.env_hashes)} package contents.", class_="flag")
        )
    return join(
        [
            *notes,
            table(
                [
                    "model",
                    "mean reward",
                    "95% CI",
                    "pass@k",
                    "pass^k",
                    "errors",
                    "tokens",
                    "cost",
                    "tasks x rollouts",
                ],
                rows,
                numeric=(1, 6, 7),
                nowrap=(2, 3, 4, 8),
            ),
            tag(
                "p",
                f"Errors flagged above {card.infra_threshold:.0%} of rollouts (infrastructure failures).",
                class_="note",
            ),
            plots,
            tag("h2", "Sampling settings"),
            tag(
                "p",
                "seed: the run's seed; each rollout's sampling seed is derived from it.",
                class_="note",
            ),
            _settings_table(card),
            tag("h2", "Difficulty and the learnable band"),
            tag("p", f"Learnable band: {_band_text(card.band)} (as in verihub calibrate).", class_="note"),
            _difficulty_table(card, export_href),
            *(_model_details(m) for m in card.models),
        ]
    )


def _in_band(band: tuple[float, float]) -> Callable[[float], bool]:
    return lambda p: in_band(p, band)


def _date(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).strftime("%Y-%m-%d")


def _rank_cell(r: RankedRow) -> object:
    if r.tied:
        return tag("span", r.rank_text, class_="tie", title="tied: 95% intervals overlap")
    return r.rank_text


def hub_badge(hub_run: bool) -> object:
    """The "run by the hub" mark, or nothing."""
    return join([" ", tag("span", HUB_RUN_BADGE, class_="hubrun")]) if hub_run else ""


#: Puts a ranking's rows in the order a page asks for (their ranks stay as ranked).
RowOrder = Callable[[Sequence[RankedRow]], Sequence[RankedRow]]


def render_ranking(
    ranking: Ranking, *, run_href: Callable[[str], str], order: RowOrder | None = None
) -> Safe:
    """A ranking as a table: tied ranks shown ``=n``, identical runs as one row with their count,
    high infrastructure-error shares flagged; mixed settings get a settings column, and the owner
    column appears when some run has an owner. ``run_href(entry_id)`` links a row to its run;
    ``order`` sorts the rows otherwise than by rank (each keeps its rank)."""

    def name(r: RankedRow) -> object:
        runs = f" ×{len(r.entries)} identical runs" if len(r.entries) > 1 else ""
        return join(
            [
                link(run_href(r.entry.id), r.name),
                tag("span", runs, class_="tie") if runs else "",
                hub_badge(r.entry.origin == "hub"),
            ]
        )

    # (header, cell, numeric, may wrap)
    columns: list[tuple[str, Callable[[RankedRow], object], bool, bool]] = [
        ("#", _rank_cell, False, False),
        ("model", name, False, True),
        ("mean reward", lambda r: fmt(r.entry.mean_reward), True, False),
        ("95% CI", lambda r: _ci(r.entry.ci95), False, False),
        ("pass@1", lambda r: fmt(r.entry.pass_at_k.get("1")), True, False),
        ("pass@k", lambda r: _top_k(r.entry.pass_at_k), False, False),
        (
            "errors",
            lambda r: _errors(
                r.entry.n_errors,
                r.entry.n_rollouts,
                r.entry.errors_by_kind,
                r.infra.flagged,
                r.infra.describe(),
            ),
            False,
            False,
        ),
        ("tokens", lambda r: r.entry.usage.get("total_tokens", 0), True, False),
        ("cost", lambda r: _cost(r.entry.cost_usd), True, False),
        ("run date", lambda r: _date(r.entry.created_at), False, False),
    ]
    if ranking.mixed:
        columns.insert(2, ("settings", lambda r: settings_label(r.entry), False, True))
        if len({(r.entry.env_version, r.entry.env_hash) for r in ranking.rows}) > 1:
            columns.insert(2, ("version", lambda r: r.entry.env_version, False, False))
    if any(r.entry.owner for r in ranking.rows):
        columns.insert(-1, ("owner", lambda r: r.entry.owner or "–", False, True))
    shown = ranking.rows if order is None else order(ranking.rows)
    rows = [[cell(r) for _, cell, _, _ in columns] for r in shown]
    foot = []
    if any(r.tied for r in ranking.rows):
        foot.append(tag("p", "=n: tied, the 95% intervals of these runs overlap.", class_="note"))
    if ranking.mixed:
        foot.append(
            tag("p", "Runs of different settings, compared on request: not a ranking.", class_="flag")
        )
    headers = [h for h, _, _, _ in columns]
    numeric = [i for i, c in enumerate(columns) if c[2]]
    nowrap = [i for i, c in enumerate(columns) if not c[3]]
    return join([table(headers, rows, numeric=numeric, nowrap=nowrap), *foot])
