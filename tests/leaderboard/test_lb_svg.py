"""Plots carry no inline style (leaderboard.svg): the hub's pages allow only ``style-src 'self'``,
under which a ``style=`` attribute or a ``<style>`` element is refused and the plot turns black."""

from __future__ import annotations

import re

from leaderboard.plots import Series, pass_rate_histogram, scores_plot
from leaderboard.svg import presentation_attributes

SERIES = [
    Series("a", 0.6, (0.4, 0.8), {"1": 0.6, "2": 0.8}, (0.0, 0.5, 1.0, 0.25)),
    Series("b", 0.2, (0.1, 0.3), {"1": 0.2, "2": 0.3}, (0.0, 0.0, 0.5, 0.25)),
]


def test_declarations_become_presentation_attributes() -> None:
    svg = (
        '<svg width="10pt"><defs><style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}'
        '</style></defs><path d="M 0 0" style="fill: #4c78a8; stroke: url(#p1); opacity: 0.5"/>'
        '<text style="font-family: &quot;DejaVu Sans&quot;">x</text></svg>'
    )
    out = presentation_attributes(svg)
    assert out.startswith('<svg stroke-linejoin="round" stroke-linecap="butt" width="10pt">')
    assert '<path d="M 0 0" fill="#4c78a8" stroke="url(#p1)" opacity="0.5"/>' in out
    assert 'font-family="&quot;DejaVu Sans&quot;"' in out
    assert "style" not in out


def test_matplotlib_plots_keep_their_colours_without_css() -> None:
    for svg in (scores_plot(SERIES, salt="s"), pass_rate_histogram(SERIES, salt="h", band=(1 / 64, 0.7))):
        assert svg is not None and svg.startswith("<svg")
        assert "style=" not in svg and "<style" not in svg
        fills = set(re.findall(r'fill="([^"]+)"', svg))
        assert "#4c78a8" in fills or "#1f77b4" in fills  # the bars' colour survived as an attribute
        assert 'stroke-linecap="butt"' in svg[: svg.index(">")]  # the <style> rule, on the root
