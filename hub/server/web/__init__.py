"""The server's HTML: page rendering with Jinja templates (:mod:`.pages`, ``templates/``), what an
environment's page shows beside its README (:mod:`.envinfo`: results summary, install count),
a version's verifier card (:mod:`.verifier_card`), GET sorting and filtering of tables
(:mod:`.tables`), the README renderer and sanitiser (:mod:`.markdown`), the account pages
(:mod:`.account_pages`), untrusted text with its control characters shown (:mod:`.text`, the
templates' ``visible`` filter) and the answers to refusals (:mod:`.errors`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`leaderboard` (run entries).
"""

__all__: list[str] = []
