"""The review queue: leased jobs in the database (:mod:`.jobs`) and the sandboxed review child the
worker starts (:mod:`.review_child`, ``python -m hub.server.reviews.review_child``).

Imports: :mod:`hub.server.core`, :mod:`hub.review`.
"""

__all__: list[str] = []
