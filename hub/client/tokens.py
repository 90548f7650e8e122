"""One's own hub tokens and sessions over the API (``verihub tokens ...``): the same checks as
the hub's settings page, which calls the same service."""

from __future__ import annotations

from typing import Any

from hub.client.api import hub_request

__all__ = ["create_token", "list_tokens", "revoke_sessions", "revoke_token"]


def list_tokens(hub: str, *, token: str | None) -> list[dict[str, Any]]:
    """The caller's tokens (id, scope, created, expiry, state; never a secret)."""
    answer = hub_request(hub, "/api/v1/tokens", token=token)
    return list(answer["tokens"])


def create_token(hub: str, scope: str, *, expires_days: float | None, token: str | None) -> dict[str, Any]:
    """A new token of the caller's (``token`` in the answer, shown once)."""
    query = {"scope": scope}
    if expires_days is not None:
        query["expires_days"] = str(expires_days)
    answer: dict[str, Any] = hub_request(hub, "/api/v1/tokens", token=token, method="POST", query=query)
    return answer


def revoke_token(hub: str, token_id: str, *, token: str | None) -> dict[str, Any]:
    """Revoke one of the caller's tokens, given whole or by its id."""
    ident = token_id.strip()
    if ident.startswith("vh_"):
        ident = ident[3:15]
    answer: dict[str, Any] = hub_request(hub, f"/api/v1/tokens/{ident}/revoke", token=token, method="POST")
    return answer


def revoke_sessions(hub: str, *, token: str | None) -> int:
    """Sign the caller out of every browser; how many sessions ended."""
    return int(hub_request(hub, "/api/v1/sessions/revoke", token=token, method="POST")["ended"])
