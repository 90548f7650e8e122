"""Minimal, escaping-by-default HTML building for the static site.

Everything a run contains (model names, prompts, completions, grader reasons) is hostile text.
:func:`esc` escapes any value that is not already :class:`Safe`, and every helper here passes its
inputs through it, so raw text cannot become markup by accident. Pages also carry a Content
Security Policy that forbids scripts and every network fetch, so even a missed escape runs
nothing and loads nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from markupsafe import Markup, escape

__all__ = ["Safe", "esc", "join", "link", "page", "table", "tag"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;
padding:1rem 1.5rem;color:#1d1d1f;line-height:1.45;overflow-wrap:anywhere}
@media (max-width:600px){body{padding:.6rem .7rem}h1{font-size:1.4rem}}
nav{font-size:.9rem;margin-bottom:1rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:left;vertical-align:top;
overflow-wrap:normal;min-width:2.5em}
th,td.num,td.nw{white-space:nowrap}
th{background:#f4f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.stale{color:#8a5a00;background:#fff4d6;padding:0 .3rem;border-radius:3px;font-size:.8rem}
.plot svg{max-width:100%;height:auto}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:1rem}
figure{margin:0;min-width:0}
details{border:1px solid #ddd;border-radius:4px;margin:.4rem 0;padding:.3rem .6rem}
summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f9;padding:.5rem;margin:.3rem 0}
.pass{color:#176f2c}.fail{color:#a31515}.err{color:#8a5a00}
code{font-size:.85rem;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
"""


#: Markup that is already escaped (or built only from escaped parts): markupsafe's ``Markup``, the
#: same type the hub server's Jinja templates take as safe, so a fragment passes between them as is.
Safe = Markup


def esc(value: object) -> Safe:
    """``value`` as HTML text: escaped unless it is already markup; None becomes ''."""
    if value is None:
        return Safe("")
    return escape(value)


def join(parts: Iterable[object], sep: str = "") -> Safe:
    return Safe(esc(sep).join(esc(p) for p in parts))


def tag(name: str, *children: object, **attrs: object) -> Safe:
    """``<name attrs>children</name>``; attribute values and children are escaped.
    A trailing underscore in an attribute name is dropped (``class_`` -> ``class``)."""
    attr = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in attrs.items() if v is not None
    )
    return Safe(f"<{name}{attr}>{join(children)}</{name}>")


def link(href: str, text: object) -> Safe:
    return tag("a", text, href=href)


def table(
    headers: Sequence[object],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Sequence[int] = (),
    nowrap: Sequence[int] = (),
) -> Safe:
    """A table in a box that scrolls sideways on a narrow screen (the page itself never does);
    ``numeric`` lists the column indexes aligned right, ``nowrap`` those kept on one line."""
    head = tag("thead", tag("tr", *(tag("th", h) for h in headers)))
    body_rows = [
        tag(
            "tr",
            *(
                tag("td", c, class_="num" if i in numeric else "nw" if i in nowrap else None)
                for i, c in enumerate(row)
            ),
        )
        for row in rows
    ]
    return tag("div", tag("table", head, tag("tbody", *body_rows)), class_="scroll")


def page(title: str, body: object, *, root: str, css: str = "") -> Safe:
    """A complete standalone page; ``root`` is the relative path to the site root ('' or '../');
    ``css`` is added to the page's style sheet (trusted text, never run content)."""
    nav = tag("nav", link(f"{root}index.html", "verihub leaderboard"))
    return Safe(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_CSS}{css}</style></head>"
        f"<body>{nav}{tag('h1', title)}{esc(body)}</body></html>\n"
    )
