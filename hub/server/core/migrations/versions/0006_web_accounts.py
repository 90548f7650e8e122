"""Accounts in the browser: a password hash per user, server-side sessions and sign-up
invitations (both stored only as hashes of their secrets).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("owners") as batch:
        batch.add_column(sa.Column("password_hash", sa.Text, nullable=False, server_default=""))
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("last_seen_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])
    op.create_table(
        "invitations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("reviewer", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_by_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime, nullable=True),
        sa.Column("used_by_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("invitations")
    op.drop_index("ix_web_sessions_user_id", "web_sessions")
    op.drop_table("web_sessions")
    # a plain DROP COLUMN (SQLite >= 3.35 and PostgreSQL): a batch rebuild of ``owners`` would
    # drop the table every other table refers to, which SQLite's foreign keys refuse once rows exist
    op.execute("ALTER TABLE owners DROP COLUMN password_hash")
