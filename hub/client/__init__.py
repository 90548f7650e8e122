"""The client side of a hub: login settings and the HTTP API (:mod:`.api`), pushing an environment
(:mod:`.push`), installing a reviewed version (:mod:`.install`), and pulling reviewed data: label
files and training records (:mod:`.labels`). Needs none of the server's dependencies.

Imports: :mod:`hub.env`, :mod:`hub.registry`; imported by :mod:`hub.cli` and the server's publishing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.client.api import (
        HubError,
        clear_login,
        hub_request,
        hub_settings,
        pack_bundle,
        push_results,
        save_login,
    )
    from hub.client.author import review_status, set_visibility, transfer, wait_for_review, yank
    from hub.client.install import AmbiguousIdError, install_from_hub, resolve_on_hub
    from hub.client.labels import pull_labels, pull_training, resolve_version
    from hub.client.runpack import MAX_MEMBERS, RUN_FILES, pack_run
    from hub.client.tokens import create_token, list_tokens, revoke_sessions, revoke_token

__all__ = [
    "AmbiguousIdError",
    "HubError",
    "MAX_MEMBERS",
    "RUN_FILES",
    "clear_login",
    "create_token",
    "hub_request",
    "hub_settings",
    "install_from_hub",
    "list_tokens",
    "pack_bundle",
    "pack_run",
    "pull_labels",
    "pull_training",
    "push_results",
    "resolve_on_hub",
    "resolve_version",
    "review_status",
    "revoke_sessions",
    "revoke_token",
    "save_login",
    "set_visibility",
    "transfer",
    "wait_for_review",
    "yank",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "AmbiguousIdError": "hub.client.install",
        "HubError": "hub.client.api",
        "MAX_MEMBERS": "hub.client.runpack",
        "RUN_FILES": "hub.client.runpack",
        "clear_login": "hub.client.api",
        "create_token": "hub.client.tokens",
        "hub_request": "hub.client.api",
        "hub_settings": "hub.client.api",
        "install_from_hub": "hub.client.install",
        "list_tokens": "hub.client.tokens",
        "pack_bundle": "hub.client.api",
        "pack_run": "hub.client.runpack",
        "pull_labels": "hub.client.labels",
        "pull_training": "hub.client.labels",
        "push_results": "hub.client.api",
        "resolve_on_hub": "hub.client.install",
        "resolve_version": "hub.client.labels",
        "review_status": "hub.client.author",
        "revoke_sessions": "hub.client.tokens",
        "revoke_token": "hub.client.tokens",
        "save_login": "hub.client.api",
        "set_visibility": "hub.client.author",
        "transfer": "hub.client.author",
        "wait_for_review": "hub.client.author",
        "yank": "hub.client.author",
    },
)
