"""Bounties: the reviewer role on owners, the bounties table and its history of transitions.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("owners") as batch:
        batch.add_column(sa.Column("is_reviewer", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "bounties",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("reward", sa.String(200), nullable=False),
        sa.Column("deadline", sa.DateTime, nullable=False),
        sa.Column("claim_days", sa.Float, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("creator_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("claimant_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
        sa.Column("claimed_at", sa.DateTime, nullable=True),
        sa.Column("claim_expires_at", sa.DateTime, nullable=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=True),
        sa.Column("submitted_at", sa.DateTime, nullable=True),
        sa.Column("payout_amount", sa.String(200), nullable=False),
        sa.Column("payout_reference", sa.Text, nullable=False),
        sa.Column("payout_recipient_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
        sa.Column("payout_by_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
        sa.Column("payout_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_bounties_state", "bounties", ["state"])
    op.create_table(
        "bounty_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("bounty_id", sa.Integer, sa.ForeignKey("bounties.id"), nullable=False),
        sa.Column("actor_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("from_state", sa.String(16), nullable=False),
        sa.Column("to_state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=True),
    )
    op.create_index("ix_bounty_events_bounty", "bounty_events", ["bounty_id"])


def downgrade() -> None:
    op.drop_table("bounty_events")
    op.drop_table("bounties")
    with op.batch_alter_table("owners") as batch:
        batch.drop_column("is_reviewer")
