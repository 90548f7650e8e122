"""The server's HTML: page rendering with Jinja templates (:mod:`.pages`, ``templates/``), what an
environment's page shows beside its README (:mod:`.envinfo`: results summary, install count),
a version's verifier card (:mod:`.verifier_card`), GET sorting and filtering of tables
(:mod:`.tables`), the README renderer and sanitiser (:mod:`.markdown`), the account pages
(:mod:`.account_pages`), untrusted text with its control characters shown (:mod:`.text`, the
templates' ``visible`` filter) and the answers to refusals (:mod:`.errors`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`leaderboard` (run entries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.server.web.errors import STATUS, error, exception_handlers, refused_page
    from hub.server.web.markdown import render_markdown, render_readme
    from hub.server.web.pages import HEADERS, render_page
    from hub.server.web.tables import Sort, parse_sort, sort_rows
    from hub.server.web.text import cut
    from hub.server.web.verifier_card import card_json

__all__ = [
    "HEADERS",
    "STATUS",
    "Sort",
    "card_json",
    "cut",
    "error",
    "exception_handlers",
    "parse_sort",
    "refused_page",
    "render_markdown",
    "render_page",
    "render_readme",
    "sort_rows",
]
__getattr__, __dir__ = surface(
    __name__,
    {
        "HEADERS": "hub.server.web.pages",
        "STATUS": "hub.server.web.errors",
        "Sort": "hub.server.web.tables",
        "card_json": "hub.server.web.verifier_card",
        "cut": "hub.server.web.text",
        "error": "hub.server.web.errors",
        "exception_handlers": "hub.server.web.errors",
        "parse_sort": "hub.server.web.tables",
        "refused_page": "hub.server.web.errors",
        "render_markdown": "hub.server.web.markdown",
        "render_page": "hub.server.web.pages",
        "render_readme": "hub.server.web.markdown",
        "sort_rows": "hub.server.web.tables",
    },
)
