"""Bounties: the state machine and its permission rules (:mod:`.workflow`), input checks (:mod:`.inputs`),
what a viewer may see (:mod:`.view`), the JSON API (:mod:`.api`) and the pages (:mod:`.pages`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`hub.server.web`.
"""

__all__: list[str] = []
