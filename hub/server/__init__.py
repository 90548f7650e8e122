"""The hub server: publishing, the package index, reviews, results, bounties and pages.

Rooms, lowest first: :mod:`.core` (settings, database, records, blobs), :mod:`.accounts` (users,
tokens, request credentials), :mod:`.web` (templates and Markdown), then :mod:`.packages`
(publishing and the index), :mod:`.reviews` (the review queue), :mod:`.results` (pushed runs,
re-verification, cards and leaderboards) and :mod:`.bounties`. At the top: :mod:`.app` (the
Starlette application), :mod:`.worker` (reviews and re-verifications), :mod:`.serve` and
:mod:`.admin` (what ``verihub hub ...`` runs on a data folder). The client side of a hub lives
in :mod:`hub.client`.

Imports: any room of :mod:`hub` below it and :mod:`leaderboard`; only :mod:`hub.cli` imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.server.accounts.invitations import create_invitation
    from hub.server.accounts.passwords import set_password
    from hub.server.accounts.users import (
        Principal,
        add_org,
        add_user,
        create_token,
        revoke_token,
        set_reviewer,
    )
    from hub.server.admin import approve, backfill_rollouts, collect_garbage, open_hub, status, yank
    from hub.server.core.config import HubConfig
    from hub.server.core.db import current_revision, make_engine, sessions
    from hub.server.core.models import Owner
    from hub.server.core.problems import HubProblem
    from hub.server.packages.bundled import publish_bundled
    from hub.server.results.hub_evals import EvalRequest, queue_eval
    from hub.server.worker import work

__all__ = [
    "EvalRequest",
    "HubConfig",
    "HubProblem",
    "Owner",
    "Principal",
    "add_org",
    "add_user",
    "approve",
    "backfill_rollouts",
    "collect_garbage",
    "create_invitation",
    "create_token",
    "current_revision",
    "make_engine",
    "open_hub",
    "publish_bundled",
    "queue_eval",
    "revoke_token",
    "sessions",
    "set_password",
    "set_reviewer",
    "status",
    "work",
    "yank",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "EvalRequest": "hub.server.results.hub_evals",
        "HubConfig": "hub.server.core.config",
        "HubProblem": "hub.server.core.problems",
        "Owner": "hub.server.core.models",
        "Principal": "hub.server.accounts.users",
        "add_org": "hub.server.accounts.users",
        "add_user": "hub.server.accounts.users",
        "approve": "hub.server.admin",
        "backfill_rollouts": "hub.server.admin",
        "collect_garbage": "hub.server.admin",
        "create_invitation": "hub.server.accounts.invitations",
        "create_token": "hub.server.accounts.users",
        "current_revision": "hub.server.core.db",
        "make_engine": "hub.server.core.db",
        "open_hub": "hub.server.admin",
        "publish_bundled": "hub.server.packages.bundled",
        "queue_eval": "hub.server.results.hub_evals",
        "revoke_token": "hub.server.accounts.users",
        "sessions": "hub.server.core.db",
        "set_password": "hub.server.accounts.passwords",
        "set_reviewer": "hub.server.accounts.users",
        "status": "hub.server.admin",
        "work": "hub.server.worker",
        "yank": "hub.server.admin",
    },
)
