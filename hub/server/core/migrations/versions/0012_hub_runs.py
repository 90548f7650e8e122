"""Runs the hub ran itself: where a run comes from (``runs.origin``, ``pushed`` or ``hub``), the
endpoint a hub-run evaluation called (``runs.endpoint``), and the queue of such evaluations.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("origin", sa.String(8), nullable=False, server_default="pushed"))
        batch.add_column(sa.Column("endpoint", sa.String(300), nullable=False, server_default=""))
    op.create_table(
        "hub_evals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
        sa.Column("requester_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("base_url", sa.String(300), nullable=False),
        sa.Column("api_key_env", sa.String(100), nullable=False, server_default=""),
        sa.Column("num_tasks", sa.Integer, nullable=True),
        sa.Column("rollouts", sa.Integer, nullable=False, server_default="1"),
        sa.Column("seed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("state", sa.String(12), nullable=False, server_default="queued"),
        sa.Column("report", sa.Text, nullable=False, server_default=""),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("worker", sa.String(200), nullable=False, server_default=""),
        sa.Column("lease_until", sa.DateTime, nullable=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("hub_evals")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("endpoint")
        batch.drop_column("origin")
