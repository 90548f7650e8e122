"""Shared pieces of the bounty tests: a hub with reviewers, environment versions written straight
into its database (no bundle needed: bounties only link versions and read their review state),
API calls, and the hub served over real HTTP for the CLI and the browser.

People: alice and bob (push tokens, alice is in organisation lab), rita (a reviewer, review
token; ``rita_push`` is her push token), carol (a reviewer who also claims), vic (a review token
but not a reviewer), root (an admin, admin token), ``alice_read`` (a read token).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serving import serve_http  # noqa: E402  (re-exported for the bounty tests)
from sqlalchemy import select, update

from hub.server.core.models import Bounty, Environment, Owner, Version, utcnow

__all__ = ["BountyHub", "open_bounty_hub", "serve_http"]


@dataclass
class BountyHub:
    config: Any
    client: Any
    tokens: dict[str, str]

    def auth(self, who: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}

    def create(self, who: str | None = "rita", **fields: Any) -> Any:
        deadline = (utcnow() + dt.timedelta(days=30)).isoformat() + "Z"
        body = {"title": "Build a SQL grader", "spec": "Grade **SQL** answers.", "reward": "500 EUR"}
        body |= {"deadline": deadline} | fields
        return self.client.post("/api/v1/bounties", json=body, headers=self.auth(who))

    def act(self, who: str | None, bounty_id: int, action: str, **fields: Any) -> Any:
        return self.client.post(f"/api/v1/bounties/{bounty_id}/{action}", json=fields, headers=self.auth(who))

    def get(self, bounty_id: int, who: str | None = None) -> Any:
        return self.client.get(f"/api/v1/bounties/{bounty_id}", headers=self.auth(who)).json()

    def version(self, ref: str, state: str = "queued", *, private: bool = False) -> None:
        """Add ``owner/env_id@version`` (its environment too, if new) in review state ``state``."""
        name, _, version = ref.partition("@")
        owner_name, env_id = name.split("/")
        with self.client.app.state.sessions() as s:
            owner = s.scalars(select(Owner).where(Owner.name == owner_name)).one()
            env = s.scalars(
                select(Environment).where(Environment.owner_id == owner.id, Environment.env_id == env_id)
            ).first()
            if env is None:
                project = f"{owner_name}-{env_id}".replace("_", "-")
                env = Environment(owner_id=owner.id, env_id=env_id, distribution=project, project=project)
                env.private = private
                s.add(env)
                s.flush()
            s.add(
                Version(
                    environment_id=env.id, version=version, manifest_sha256="m", content_hash="c", state=state
                )
            )
            s.commit()

    def review_done(self, ref: str, state: str) -> None:
        """The hub's review of ``ref`` finished with ``state`` (passed or failed)."""
        name, _, version = ref.partition("@")
        with self.client.app.state.sessions() as s:
            env = s.scalars(select(Environment).where(Environment.env_id == name.split("/")[1])).all()
            ids = [e.id for e in env if e.owner.name == name.split("/")[0]]
            s.execute(
                update(Version)
                .where(Version.environment_id.in_(ids), Version.version == version)
                .values(state=state, reviewed_at=utcnow())
            )
            s.commit()

    def shift(self, bounty_id: int, **fields: dt.datetime) -> None:
        """Set time fields of a bounty (move a claim's expiry or the deadline into the past)."""
        with self.client.app.state.sessions() as s:
            s.execute(update(Bounty).where(Bounty.id == bounty_id).values(**fields))
            s.commit()


def _people(config: Any) -> dict[str, str]:
    from hub.server.accounts.users import add_org, add_user, create_token
    from hub.server.admin import open_hub

    with open_hub(config) as s:
        for name in ("alice", "bob", "vic"):
            add_user(s, name)
        add_user(s, "rita", reviewer=True)
        add_user(s, "carol", reviewer=True)
        add_user(s, "root", admin=True)
        add_org(s, "lab", ["alice"])
        tokens = {name: create_token(s, name, "push") for name in ("alice", "bob", "carol")}
        tokens |= {name: create_token(s, name, "review") for name in ("rita", "vic")}
        tokens["carol_review"] = create_token(s, "carol", "review")
        tokens["rita_push"] = create_token(s, "rita", "push")
        tokens["alice_read"] = create_token(s, "alice", "read")
        tokens["root"] = create_token(s, "root", "admin")
        return tokens


@contextmanager
def open_bounty_hub(tmp_path: Path) -> Iterator[BountyHub]:
    """A hub on a temporary SQLite database with the people above and their tokens."""
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig

    config = HubConfig(data=tmp_path / "hub", lease_s=30.0, review_fast=True)
    tokens = _people(config)
    with TestClient(create_app(config)) as client:
        yield BountyHub(config, client, tokens)
