"""The server's HTML: page rendering with Jinja templates (:mod:`.pages`, ``templates/``), the
README renderer and sanitiser (:mod:`.markdown`), the account pages (:mod:`.account_pages`),
untrusted text with its control characters shown (:mod:`.text`, the templates' ``visible``
filter) and the answers to refusals (:mod:`.errors`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`.
"""

__all__: list[str] = []
