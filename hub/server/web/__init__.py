"""The server's HTML: page rendering with Jinja templates (:mod:`.pages`, ``templates/``) and the
README renderer and sanitiser (:mod:`.markdown`), and untrusted text with its control characters
shown (:mod:`.text`, the templates' ``visible`` filter).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`.
"""

__all__: list[str] = []
