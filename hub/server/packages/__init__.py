"""Environments as packages: publishing a pushed bundle (:mod:`.publish`), the PEP 503/691 index and
file downloads (:mod:`.index`), the environment JSON API (:mod:`.api`) and publishing the bundled
environments (:mod:`.bundled`).

Imports: :mod:`hub.server.core`, :mod:`hub.server.accounts`, :mod:`hub.server.web`, :mod:`hub.client`.
"""

__all__: list[str] = []
