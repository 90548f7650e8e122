"""README rendering: Markdown to HTML with raw HTML disabled, then sanitised again by nh3.

Two layers: markdown-it escapes raw HTML and refuses ``javascript:``-like link targets; nh3
(an allow-list sanitiser) then keeps only harmless tags and attributes and http(s)/mailto
URLs, so no script, event-handler attribute or script URL can reach a page.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

__all__ = ["MAX_README_BYTES", "render_markdown", "render_readme"]

#: The most of a README that is rendered (at publish, once per version); the rest is cut.
MAX_README_BYTES = 256 * 1024

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "i", "img", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead",
    "tr", "ul",
}  # fmt: skip
_ATTRS = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "th": {"align"}, "td": {"align"}}


def render_markdown(text: str) -> str:
    """Safe HTML for a README."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    return nh3.clean(
        md.render(text),
        tags=_TAGS,
        attributes=_ATTRS,
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )


def render_readme(text: str) -> str:
    """A version's README as safe HTML, rendered once at publish: at most
    :data:`MAX_README_BYTES` of it (rendering cost grows with size; pathological Markdown of that
    size takes about 2 s of CPU), with a note where it was cut."""
    raw = text.encode("utf-8")
    if len(raw) <= MAX_README_BYTES:
        return render_markdown(text)
    cut = raw[:MAX_README_BYTES].decode("utf-8", errors="ignore")
    note = f"<p><em>(README cut at {MAX_README_BYTES // 1024} KiB of {len(raw) // 1024} KiB.)</em></p>"
    return render_markdown(cut) + note
