"""A per-process cache of who an ``Authorization`` header is, so that pip's authenticated
requests (one per page and file) skip the thread hop and the database once a token was checked.

An entry is keyed by the sha256 of the header (the secret itself is never kept) and holds the
principal and what it may see. It is valid while the hub's generation stamp is unchanged (every
write, a token's revocation and a membership change included, bumps it, as for the page cache:
:mod:`hub.server.core.cache`), for at most ``ttl_s`` seconds, and never past the token's expiry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["AuthCache"]

V = TypeVar("V")


@dataclass(frozen=True)
class _Entry(Generic[V]):
    value: V
    stamp: tuple[int, int]
    deadline: float


class AuthCache(Generic[V]):
    """``header -> value`` under a generation stamp, a time limit and a size cap (LRU)."""

    def __init__(self, *, ttl_s: float = 30.0, max_entries: int = 4096) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: OrderedDict[str, _Entry[V]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(header: str) -> str:
        return hashlib.sha256(header.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, header: str, stamp: tuple[int, int]) -> V | None:
        """The cached value for ``header``, or None when absent, stale or expired."""
        key = self._key(header)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.stamp != stamp or time.monotonic() >= entry.deadline:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry.value

    def put(
        self, header: str, stamp: tuple[int, int], value: V, *, expires_at: dt.datetime | None = None
    ) -> None:
        """Remember ``value`` (looked up under ``stamp``) until the stamp changes, ``ttl_s`` passes
        or ``expires_at`` (naive UTC, the token's expiry) comes."""
        deadline = time.monotonic() + self.ttl_s
        if expires_at is not None:
            left = (expires_at - dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)).total_seconds()
            deadline = min(deadline, time.monotonic() + left)
        with self._lock:
            self._entries[self._key(header)] = _Entry(value, stamp, deadline)
            self._entries.move_to_end(self._key(header))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
