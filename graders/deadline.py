"""A time limit for awaiting that never swallows a cancellation.

Python 3.11's ``asyncio.wait_for`` returns the result when the awaited thing finishes in the same
loop turn as a cancellation of the caller, so a cancelled rollout (or grade) could go on running;
``asyncio.timeout`` (3.11+) re-raises the cancellation. Python 3.10 has only ``wait_for``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["within"]

T = TypeVar("T")


async def within(aw: Awaitable[T], timeout_s: float) -> T:
    """``await aw`` with a time limit: :class:`asyncio.TimeoutError` past ``timeout_s`` (the
    builtin :class:`TimeoutError` on 3.11+), the caller's own cancellation always re-raised."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout_s):
            return await aw
    return await asyncio.wait_for(aw, timeout=timeout_s)
