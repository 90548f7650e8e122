"""Plots of a column as inline SVG strings, made with matplotlib (imported lazily, Agg backend).

Text is drawn as paths (``svg.fonttype = "path"``), so model names never appear as markup in the
SVG; matplotlib escapes the comments it writes. Each plot gets its own id salt so several SVGs can
share one HTML page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Series", "pass_at_k_plot", "pass_rate_histogram", "scores_plot"]

_MAX_LABEL = 32


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
    return text[start:] if start >= 0 else text


def scores_plot(series: Sequence[Series], *, salt: str) -> str:
    """Horizontal bars of mean reward with 95% interval bars, best at the top."""
    scored = [s for s in series if s.mean is not None]
    fig = _figure(7.0, 0.45 * max(len(scored), 1) + 1.2)
    ax = fig.add_subplot()
    ys = list(range(len(scored)))[::-1]
    means = [s.mean or 0.0 for s in scored]
    lo = [max(0.0, (s.mean or 0.0) - s.ci95[0]) if s.ci95 else 0.0 for s in scored]
    hi = [max(0.0, s.ci95[1] - (s.mean or 0.0)) if s.ci95 else 0.0 for s in scored]
    ax.barh(ys, means, color="#4c78a8", xerr=[lo, hi], capsize=4, error_kw={"ecolor": "#333333"})
    ax.set_yticks(ys, [_short(s.label) for s in scored])
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("mean reward (95% bootstrap interval over tasks)")
    ax.grid(axis="x", alpha=0.3)
    return _to_svg(fig, salt)


def pass_at_k_plot(series: Sequence[Series], *, salt: str) -> str:
    """pass@k against k (log2 axis), one line per run."""
    fig = _figure(7.0, 3.6)
    ax = fig.add_subplot()
    any_line = False
    for s in series:
        pts = sorted((int(k), v) for k, v in s.pass_at_k.items())
        if not pts:
            continue
        any_line = True
        ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=_short(s.label))
    if any(len(s.pass_at_k) > 1 for s in series):
        ax.set_xscale("log", base=2)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("k (samples per task)")
    ax.set_ylabel("pass@k")
    ax.grid(alpha=0.3)
    if any_line:
        ax.legend(loc="lower right", fontsize="small")
    return _to_svg(fig, salt)


def pass_rate_histogram(series: Sequence[Series], *, salt: str) -> str:
    """Per-task difficulty: how many tasks each run solves at a given pass rate."""
    fig = _figure(7.0, 3.6)
    ax = fig.add_subplot()
    bins = [i / 10 for i in range(11)]
    data: list[Any] = [list(s.task_pass_rates) for s in series if s.task_pass_rates]
    labels = [_short(s.label) for s in series if s.task_pass_rates]
    if data:
        ax.hist(data, bins=bins, label=labels, histtype="bar")
        ax.legend(loc="upper center", fontsize="small")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("per-task pass rate")
    ax.set_ylabel("tasks")
    ax.grid(axis="y", alpha=0.3)
    return _to_svg(fig, salt)
