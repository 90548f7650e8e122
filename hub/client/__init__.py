"""The client side of a hub: login settings and the HTTP API (:mod:`.api`), pushing an environment
(:mod:`.push`), installing a reviewed version (:mod:`.install`), and pulling reviewed data: label
files and training records (:mod:`.labels`). Needs none of the server's dependencies.

Imports: :mod:`hub.env`, :mod:`hub.registry`; imported by :mod:`hub.cli` and the server's publishing.
"""

__all__: list[str] = []
