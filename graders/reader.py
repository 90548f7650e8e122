"""The reader's view of a response: the text a person sees once it is rendered.

:func:`reader_view` renders Markdown (CommonMark, by ``markdown-it-py``) and the HTML in it to
visible text, then applies the folding of :mod:`graders.typography`. Emphasis, code and links keep
only their text (``c**a**t`` is ``cat``); comments, scripts, styles and hidden elements drop out
with their content; character references are decoded; struck text shows as ``~~text~~`` (taken
back); list items and typographic bullets become ``- `` lines; inline math holding a plain
literal (``\\(42\\)``) shows that literal. ``markdown=False`` gives the HTML part only, for
LaTeX-heavy text that Markdown's escapes would damage. The rules in full: docs/graders.md,
"The reader's view and the committed answer".

Text with no markup character is only folded (no rendering). Results are cached by text.
"""

from __future__ import annotations

import functools
import re
from html.parser import HTMLParser

from graders.typography import canonical_text, strip_markdown_comments

__all__ = ["MARKUP_CHARS", "html_visible_text", "reader_view"]

MARKUP_CHARS = frozenset("*_`<>&[]#~\\$|\u2022\u25e6\u25aa\u2023\u2043")
"""Characters that can change what a reader sees; text without any of them is not rendered."""

_DROPPED_TAGS = frozenset({"script", "style", "template", "head", "title", "noscript"})
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
_BLOCK_TAGS = frozenset(
    "p div section article header footer aside nav main blockquote pre table tr ul ol dl dt dd "
    "h1 h2 h3 h4 h5 h6 figure figcaption details summary form fieldset address".split()
)
_STRUCK_TAGS = frozenset({"s", "del", "strike"})  # struck text stays marked as struck: ~~x~~
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BULLET_LINE = re.compile("^([ \t]*)[\u2022\u25e6\u25aa\u2023\u2043\u25cf\u25a0][ \t]*", re.MULTILINE)
# a known HTML element, a comment or a character reference: only then is the HTML pass needed
# (a lone "<b" is more often a comparison than a tag: a closing tag is what shows HTML)
_HTML_HINT = re.compile(
    r"<!--|</[a-z][a-z0-9]*[ \t]*>|<[a-z][a-z0-9]*[^<>\n]*/>"
    r"|&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});",
    re.IGNORECASE,
)
_INLINE_LITERAL = re.compile(
    r"\\\(\s*((?:[^\\$\n]|\\,){1,80}?)\s*\\\)|(?<![\\$\w])\$\s*((?:[^\\$\n]|\\,){1,80}?)\s*\$(?![\w$])"
)
_LITERAL = re.compile(r"[+-]?[\w.,'\" -]+")
_DECLARATION = re.compile(r"<[?!][^<>]*>")
_NOT_A_TAG = re.compile(r"<(?![A-Za-z/][^<>]*>)")
_MAX_CACHED_CHARS = 20_000


def _hides(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    if tag in _DROPPED_TAGS:
        return True
    for name, value in attrs:
        name = name.lower()
        if name == "hidden":
            return True
        if name == "aria-hidden" and (value or "").strip().lower() == "true":
            return True
        if name == "style" and value and _HIDING_STYLE.search(value):
            return True
    return False


class _Visible(HTMLParser):
    """Collects the text a browser shows (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_stack: list[str] = []
        self.lists: list[list[int]] = []  # one entry per open list: [next number] or [] (bullets)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.hidden_stack:
            if tag not in _VOID_TAGS:
                self.hidden_stack.append(tag)
            return
        if _hides(tag, attrs):
            if tag not in _VOID_TAGS:
                self.hidden_stack.append(tag)
            return
        if tag == "br":
            self.parts.append("\n")
        elif tag in ("ul", "ol"):
            start = next((v for k, v in attrs if k == "start" and v and v.isdigit()), "1")
            self.lists.append([int(start)] if tag == "ol" else [])
            self.parts.append("\n")
        elif tag == "li":
            marker = "- "
            if self.lists and self.lists[-1]:
                marker = f"{self.lists[-1][0]}. "
                self.lists[-1][0] += 1
            self.parts.append("\n" + "  " * max(0, len(self.lists) - 1) + marker)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")
        elif tag in _STRUCK_TAGS:
            self.parts.append("~~")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.hidden_stack and tag == "br":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self.hidden_stack:
            if tag in self.hidden_stack:
                while self.hidden_stack and self.hidden_stack.pop() != tag:
                    pass
            return
        if tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        if tag in _BLOCK_TAGS or tag == "li":
            self.parts.append("\n")
        elif tag in _STRUCK_TAGS:
            self.parts.append("~~")

    def handle_data(self, data: str) -> None:
        if not self.hidden_stack:
            self.parts.append(data)


def html_visible_text(text: str) -> str:
    """The visible text of an HTML fragment (comments and hidden elements dropped, entities
    decoded, list items as ``- `` lines)."""
    if "<?" in text or "<!" in text:
        text = _DECLARATION.sub("", text)  # processing instructions and declarations show nothing
    # a "<" that opens no complete tag is text: html.parser would look for the tag's end again
    # from every such "<" (quadratic on "<a <a <a ...")
    text = _NOT_A_TAG.sub("&lt;", text)
    parser = _Visible()
    parser.feed(text)
    parser.close()
    return "".join(parser.parts)


@functools.cache
def _markdown() -> object:
    from markdown_it import MarkdownIt

    # indentation is not code here, "#### 42" stays an answer line and "> 2" a comparison
    return MarkdownIt("commonmark", {"html": True}).disable(["code", "heading", "blockquote"])


def _render_markdown(text: str) -> str:
    md = _markdown()
    rendered: str = md.render(text)  # type: ignore[attr-defined]
    return rendered


_LIST_LINE = re.compile(r"^[ \t]*(?:-|\d+\.) ")


def _tidy(text: str) -> str:
    """Trailing spaces cut; at most one blank line in a row, none between two list items."""
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line.strip():
            if out and out[-1]:
                out.append("")
            continue
        if len(out) >= 2 and not out[-1] and _LIST_LINE.match(line) and _LIST_LINE.match(out[-2]):
            out.pop()
        out.append(line)
    return "\n".join(out).strip("\n")


def _plain_inline_math(text: str) -> str:
    """``\\(42\\)`` and ``$42$`` as ``42``: inline math holding a plain literal renders as it."""

    def literal(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        inner = inner.replace("\\,", ",")  # a thin space between digit groups
        return inner if _LITERAL.fullmatch(inner) else match.group(0)

    return _INLINE_LITERAL.sub(literal, text)


def _drop_comments(text: str) -> str:
    """HTML comments removed in one linear pass (an unclosed one runs to the end, as a browser
    renders it); ``a<!---->b`` reads ``ab``. Done before rendering: a parser that looks for the
    end of every opening again is quadratic on ``<!--`` repeated."""
    if "<!--" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start == -1:
            parts.append(text[pos:])
            break
        parts.append(text[pos:start])
        end = text.find("-->", start + 4)
        if end == -1:
            break
        pos = end + 3
    return "".join(parts)


def _has_markup(text: str) -> bool:
    return any(ch in MARKUP_CHARS for ch in text)


def _view(text: str, markdown: bool) -> str:
    if not _has_markup(text):
        return canonical_text(text)
    if "\u2022" in text or "\u25e6" in text or "\u25aa" in text or "\u2023" in text or "\u2043" in text:
        text = _BULLET_LINE.sub(r"\1- ", text)
    if markdown:
        # Markdown comment lines ("[//]: # (...)") are hidden even right under a paragraph
        rendered = _render_markdown(_plain_inline_math(strip_markdown_comments(_drop_comments(text))))
        visible = _tidy(html_visible_text(rendered))
    elif _HTML_HINT.search(text):
        visible = html_visible_text(_drop_comments(text))
    else:
        visible = text
    return canonical_text(visible)


@functools.lru_cache(maxsize=512)
def _cached_view(text: str, markdown: bool) -> str:
    return _view(text, markdown)


def reader_view(text: str, *, markdown: bool = True) -> str:
    """What a reader sees of ``text`` (see the module docstring)."""
    if len(text) <= _MAX_CACHED_CHARS:
        return _cached_view(text, markdown)
    return _view(text, markdown)
