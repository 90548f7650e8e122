"""The hub server (reserved for the hub server issue): publishing, the package index, review jobs.

Imports: any room below it (:mod:`hub.env` to :mod:`hub.review`); only :mod:`hub.cli` imports it.
"""

__all__: list[str] = []
