"""Plots of a column as inline SVG strings, made with matplotlib (imported lazily, Agg backend).

Text is drawn as paths (``svg.fonttype = "path"``), so model names never appear as markup in the
SVG; matplotlib escapes the comments it writes. Colours and strokes are presentation attributes
(:mod:`leaderboard.svg`), never CSS, so the plots draw under a policy that forbids inline styles.
Each plot gets its own id salt so several SVGs can share one HTML page.

A plot that would show nothing (no scored run, every score zero) is not drawn: the function returns
None and the page says why in words (:data:`EMPTY_REASONS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from leaderboard.svg import presentation_attributes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["EMPTY_REASONS", "Series", "band_plot", "pass_at_k_plot", "pass_rate_histogram", "scores_plot"]

EMPTY_REASONS = {
    "scores": "No plot: every run scored 0 (or has no graded rollout).",
    "pass_at_k": "No plot: pass@k is 0 at every k for every run.",
    "histogram": "No plot: no task has a graded rollout.",
    "band": "No plot: no task was passed by any rollout, so none is in the learnable band.",
}
_BAND_COLOUR = "#59a14f"
_ZERO_COLOUR = "#d62728"
_FULL_COLOUR = "#7f7f7f"

_MAX_LABEL = 32
_LEGEND_TWO_COLUMNS = 30  # characters of the longest legend label that still fit two columns
_WIDTH = 5.4
"""Inches at 100 dpi: about the width a plot gets on the page, so its text stays readable when a
phone shrinks it to 360 px."""


@dataclass(frozen=True)
class Series:
    """One run as the plots see it."""

    label: str
    mean: float | None
    ci95: tuple[float, float] | None
    pass_at_k: dict[str, float]
    task_pass_rates: tuple[float, ...]


def _short(label: str) -> str:
    """``label`` shortened, as plain text: matplotlib would parse ``$...$`` as mathtext (a model
    named ``$\\foo$`` made every plot, and so the whole site build, fail) and drops legend entries
    whose label starts with an underscore."""
    text = label if len(label) <= _MAX_LABEL else label[: _MAX_LABEL - 1] + "\u2026"
    text = text.replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def _figure(width: float, height: float) -> Figure:
    # A bare Figure on an Agg canvas: no pyplot, no global backend switch, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _to_svg(fig: Figure, salt: str) -> str:
    import io

    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": salt}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = text.find("<svg")
    # no <style> and no style= attributes: the plot draws under a page policy of style-src 'self'
    return presentation_attributes(text[start:] if start >= 0 else text)


def _legend_cols(labels: Sequence[str]) -> int:
    """Two legend columns when the labels are short; one when two would be wider than the
    figure (the legend is then cut at both sides)."""
    return 2 if max((len(t) for t in labels), default=0) <= _LEGEND_TWO_COLUMNS else 1


def _height(legend_entries: int, ncols: int = 2) -> float:
    """Figure height with room for a legend of ``ncols`` columns below the axes."""
    return 3.3 + 0.22 * ((legend_entries + ncols - 1) // ncols)


def _all_zero(values: Sequence[float]) -> bool:
    return all(v <= 0.0 for v in values)


def scores_plot(series: Sequence[Series], *, salt: str) -> str | None:
    """Horizontal bars of mean reward with 95% interval bars, best at the top; None when every
    run scored 0 (an axis with no bars says nothing)."""
    scored = [s for s in series if s.mean is not None]
    if _all_zero([max(s.mean or 0.0, s.ci95[1] if s.ci95 else 0.0) for s in scored]):
        return None
    fig = _figure(_WIDTH, 0.45 * max(len(scored), 1) + 1.2)
    ax = fig.add_subplot()
    ys = list(range(len(scored)))[::-1]
    means = [s.mean or 0.0 for s in scored]
    lo = [max(0.0, (s.mean or 0.0) - s.ci95[0]) if s.ci95 else 0.0 for s in scored]
    hi = [max(0.0, s.ci95[1] - (s.mean or 0.0)) if s.ci95 else 0.0 for s in scored]
    ax.barh(ys, means, color="#4c78a8", xerr=[lo, hi], capsize=4, error_kw={"ecolor": "#333333"})
    ax.set_yticks(ys, [_short(s.label) for s in scored])
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("mean reward, 95% interval over tasks")
    ax.grid(axis="x", alpha=0.3)
    return _to_svg(fig, salt)


def pass_at_k_plot(series: Sequence[Series], *, salt: str) -> str | None:
    """pass@k against k (log2 axis), one line per run; None when every value is 0."""
    if _all_zero([v for s in series for v in s.pass_at_k.values()]):
        return None
    ncols = _legend_cols([_short(s.label) for s in series])
    fig = _figure(_WIDTH, _height(len(series), ncols))
    ax = fig.add_subplot()
    for s in series:
        pts = sorted((int(k), v) for k, v in s.pass_at_k.items())
        if pts:
            ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=_short(s.label))
    if any(len(s.pass_at_k) > 1 for s in series):
        ax.set_xscale("log", base=2)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("k (samples per task)")
    ax.set_ylabel("pass@k")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", fontsize="small", ncols=ncols)
    return _to_svg(fig, salt)


def pass_rate_histogram(
    series: Sequence[Series], *, salt: str, band: tuple[float, float] | None = None
) -> str | None:
    """Tasks per pass rate, one bar group per run: 0% (red) and 100% (grey) in bars of their own at
    the ends, ten bins between, the learnable ``band`` shaded. None when no task was graded."""
    from leaderboard.difficulty import difficulty_bins

    drawn = [s for s in series if s.task_pass_rates]
    if not drawn:
        return None
    ncols = _legend_cols([_short(s.label) for s in drawn])
    fig = _figure(_WIDTH, _height(len(drawn) + (band is not None), ncols))
    ax = fig.add_subplot()
    if band is not None:
        ax.axvspan(band[0], band[1], color=_BAND_COLOUR, alpha=0.12)
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    handles: list[Any] = [Patch(color=_BAND_COLOUR, alpha=0.12, label="learnable band")] if band else []
    width = 0.09 / len(drawn)
    for n, s in enumerate(drawn):
        bins = difficulty_bins(s.task_pass_rates)
        offset = -0.045 + (n + 0.5) * width
        xs = [
            (-0.07 if b.kind == "zero" else 1.07 if b.kind == "full" else (b.low + b.high) / 2) for b in bins
        ]
        colours = [
            _ZERO_COLOUR if b.kind == "zero" else _FULL_COLOUR if b.kind == "full" else None for b in bins
        ]
        bars = ax.bar([x + offset for x in xs], [b.count for b in bins], width=width)
        # the legend shows the run's plain colour, not the hatched end bar
        handles.append(Patch(facecolor=bars.patches[1].get_facecolor(), label=_short(s.label)))
        for bar, colour in zip(bars, colours, strict=True):
            if colour is not None:
                bar.set_edgecolor(colour)
                bar.set_linewidth(2.0)
                bar.set_hatch("//")
    ax.set_xlim(-0.13, 1.13)
    ax.set_xticks(
        [-0.07, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.07], ["0%", "", "20%", "40%", "60%", "80%", "", "100%"]
    )
    ax.axvline(-0.02, color="#bbbbbb", linewidth=0.8)
    ax.axvline(1.02, color="#bbbbbb", linewidth=0.8)
    ax.set_xlabel("per-task pass rate (0% and 100% tasks hatched, at the ends)")
    ax.set_ylabel("tasks")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", alpha=0.3)
    fig.legend(handles=handles, loc="outside lower center", fontsize="small", ncols=ncols)
    return _to_svg(fig, salt)


def band_plot(
    series: Sequence[Series],
    *,
    salt: str,
    band: tuple[float, float],
    in_band: Callable[[float], bool],
) -> str | None:
    """Each run's tasks sorted by pass rate (hardest right), with the learnable band shaded and
    its task count in the legend. None when no rollout of any run passed."""
    drawn = [s for s in series if s.task_pass_rates]
    if _all_zero([p for s in drawn for p in s.task_pass_rates]):
        return None
    # each legend label ends with ": n of m in band"
    ncols = _legend_cols([_short(s.label) + ": 00 of 00 in band" for s in drawn])
    fig = _figure(_WIDTH, _height(len(drawn), ncols))
    ax = fig.add_subplot()
    ax.axhspan(band[0], band[1], color=_BAND_COLOUR, alpha=0.15)
    for s in drawn:
        rates = sorted(s.task_pass_rates, reverse=True)
        n = len(rates)
        xs = [(i + 0.5) / n for i in range(n)]
        count = sum(1 for p in rates if in_band(p))
        ax.step(xs, rates, where="mid", label=f"{_short(s.label)}: {count} of {n} in band")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("tasks, easiest to hardest (share of tasks)")
    ax.set_ylabel("pass rate")
    ax.text(0.99, (band[0] + band[1]) / 2, "learnable band", ha="right", va="center", color="#2d6a27")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", fontsize="small", ncols=ncols)
    return _to_svg(fig, salt)
