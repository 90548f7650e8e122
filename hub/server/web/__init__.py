"""The server's HTML: page rendering with Jinja templates (:mod:`.pages`, ``templates/``), what an
environment's page shows beside its README (:mod:`.envinfo`: results summary, install count, verifier
card slot), GET sorting and filtering of tables (:mod:`.tables`), and the README renderer and
sanitiser (:mod:`.markdown`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`leaderboard` (run entries).
"""

__all__: list[str] = []
