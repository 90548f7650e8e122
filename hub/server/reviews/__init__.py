"""The review queue: leased jobs in the database (:mod:`.jobs`) and the sandboxed review child the
worker starts (:mod:`.review_child`, ``python -m hub.server.reviews.review_child``).

Imports: :mod:`hub.server.core`, :mod:`hub.review`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.server.reviews.blame import host_load, outcome
    from hub.server.reviews.hostspeed import MAX_SCALE, calibrate
    from hub.server.reviews.jobs import MAX_ATTEMPTS, claim, finish, heartbeat, release

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_SCALE",
    "calibrate",
    "claim",
    "finish",
    "heartbeat",
    "host_load",
    "outcome",
    "release",
]
__getattr__, __dir__ = surface(
    __name__,
    {
        "MAX_ATTEMPTS": "hub.server.reviews.jobs",
        "MAX_SCALE": "hub.server.reviews.hostspeed",
        "calibrate": "hub.server.reviews.hostspeed",
        "claim": "hub.server.reviews.jobs",
        "finish": "hub.server.reviews.jobs",
        "heartbeat": "hub.server.reviews.jobs",
        "host_load": "hub.server.reviews.blame",
        "outcome": "hub.server.reviews.blame",
        "release": "hub.server.reviews.jobs",
    },
)
