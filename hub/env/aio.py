"""Running verihub's event loop: uvloop where it is installed (faster I/O), asyncio otherwise,
and :func:`within`, a time limit that never swallows a cancellation (:mod:`graders.deadline`'s,
which the graders use too).

Set ``VERIHUB_EVENT_LOOP=asyncio`` to force the standard loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from graders.deadline import within
from hub.env.settings import settings

__all__ = ["run", "within"]

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a fresh event loop."""
    if settings().event_loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            result: T = uvloop.run(coro)
            return result
    return asyncio.run(coro)
