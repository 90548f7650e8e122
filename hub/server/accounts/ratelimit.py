"""Rate limit on failed authentication: after N failures in a minute a client is refused (429)
until the minute is over. Kept per server process (each process limits on its own)."""

from __future__ import annotations

import threading
import time
from collections import deque

__all__ = ["FailureLimiter"]


class FailureLimiter:
    """Counts failures per client key within a sliding window."""

    def __init__(self, per_window: int, window_s: float = 60.0) -> None:
        self.per_window = per_window
        self.window_s = window_s
        self._fails: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        q = self._fails.setdefault(key, deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        return q

    def blocked(self, key: str) -> bool:
        with self._lock:
            return len(self._recent(key, time.monotonic())) >= self.per_window

    def fail(self, key: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._recent(key, now).append(now)
            if len(self._fails) > 100_000:  # forget the quiet ones
                for k in [k for k, q in self._fails.items() if not q]:
                    del self._fails[k]
