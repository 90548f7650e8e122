"""Running verihub's event loop: uvloop where it is installed (faster I/O), asyncio otherwise,
and :func:`within`, a time limit that never swallows a cancellation.

Set ``VERIHUB_EVENT_LOOP=asyncio`` to force the standard loop.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

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


async def within(aw: Awaitable[T], timeout_s: float) -> T:
    """``await aw`` with a time limit (raises :class:`TimeoutError`).

    Python 3.11's ``asyncio.wait_for`` returns the result when the awaited thing finishes in the
    same loop turn as a cancellation of the caller, so a cancelled rollout could go on running;
    ``asyncio.timeout`` (3.11+) re-raises the cancellation. Python 3.10 has only ``wait_for``.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout_s):
            return await aw
    return await asyncio.wait_for(aw, timeout=timeout_s)
