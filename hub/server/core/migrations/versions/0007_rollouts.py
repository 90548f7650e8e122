"""Pushed runs' rollouts, one row each (for run pages), and each run's ``config.json``.

Runs pushed before this revision have ``rollouts_stored`` false and no ``config`` until
``verihub hub backfill-rollouts`` reads them from their stored archives.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("config", sa.Text, nullable=False, server_default=""))
        batch.add_column(sa.Column("rollouts_stored", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "rollouts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("task_id", sa.Text, nullable=False),
        sa.Column("rollout_index", sa.Integer, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("error_kind", sa.String(16), nullable=False),
        sa.Column("reward", sa.Float, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("grade_status", sa.String(16), nullable=False),
        sa.Column("extracted", sa.Text, nullable=False),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("n_messages", sa.Integer, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("transcript", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("run_id", "idx", name="ux_rollouts_run_idx"),
    )
    op.create_index("ix_rollouts_run_order", "rollouts", ["run_id", "idx", "status", "reward"])
    op.create_index(
        "ix_rollouts_run_task", "rollouts", ["run_id", "task_id", "rollout_index", "status", "reward"]
    )
    op.create_index("ix_rollouts_run_status", "rollouts", ["run_id", "status", "idx", "reward"])
    op.create_index("ix_rollouts_run_reward", "rollouts", ["run_id", "reward", "idx", "status"])


def downgrade() -> None:
    op.drop_table("rollouts")
    op.execute("ALTER TABLE runs DROP COLUMN rollouts_stored")
    op.execute("ALTER TABLE runs DROP COLUMN config")
