"""Labels on the rollouts of pushed runs, and corrected copies of rollouts with their grades.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rollout_labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("rollout", sa.Integer, nullable=False),
        sa.Column("value", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_rollout_labels_run_id", "rollout_labels", ["run_id"])
    op.create_table(
        "corrections",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("rollout", sa.Integer, nullable=False),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("messages", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("reward", sa.Float, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("grade", sa.Text, nullable=False, server_default=""),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
        sa.Column("rerun", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_corrections_run_id", "corrections", ["run_id"])


def downgrade() -> None:
    op.drop_table("corrections")
    op.drop_table("rollout_labels")
