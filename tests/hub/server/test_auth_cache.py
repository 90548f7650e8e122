"""The per-process auth cache: an authenticated index request skips the database once the same
header was checked, and stops doing so at the hub's next write (a revocation included), after its
time limit, and at the token's expiry."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.server.accounts.authcache import AuthCache


def test_entries_end_with_the_stamp_the_time_limit_and_the_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    import hub.server.accounts.authcache as mod

    now = [1000.0]
    monkeypatch.setattr(mod.time, "monotonic", lambda: now[0])
    cache: AuthCache[str] = AuthCache(ttl_s=30.0, max_entries=2)
    cache.put("Bearer a", (1, 1), "alice")
    assert cache.get("Bearer a", (1, 1)) == "alice"
    assert cache.get("Bearer a", (1, 2)) is None  # a write happened: gone
    cache.put("Bearer a", (1, 2), "alice")
    now[0] += 31
    assert cache.get("Bearer a", (1, 2)) is None  # past the time limit
    soon = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(seconds=5)
    cache.put("Bearer b", (1, 2), "bob", expires_at=soon)
    now[0] += 6
    assert cache.get("Bearer b", (1, 2)) is None  # the token expired before the time limit
    for n in range(3):
        cache.put(f"Bearer {n}", (1, 2), str(n))
    assert cache.get("Bearer 0", (1, 2)) is None and cache.get("Bearer 2", (1, 2)) == "2"  # capped


def test_authenticated_index_requests_skip_the_database_until_a_revocation(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hub.server.packages.index as index
    from hub.server.accounts.users import revoke_token
    from hub.server.admin import open_hub

    assert hub.push(packed(arith_bundle.bundle), owner="lab", private="1").status_code == 201
    calls: list[int] = []
    real = index._who_and_scope

    def counted(request: Any) -> Any:
        calls.append(1)
        return real(request)

    monkeypatch.setattr(index, "_who_and_scope", counted)
    page = "/simple-unreviewed/verihub-arith/"
    for _ in range(5):
        assert hub.client.get(page, headers=hub.auth("alice")).status_code == 200
    assert len(calls) == 1  # checked once, then served from the auth cache
    assert hub.client.get(page, headers=hub.auth("bob")).status_code == 404  # bob is not in lab
    assert len(calls) == 2
    with open_hub(hub.config) as s:  # the CLI's path: commits, then bumps the generation
        revoke_token(s, hub.tokens["alice"])
    assert hub.client.get(page, headers=hub.auth("alice")).status_code == 401
