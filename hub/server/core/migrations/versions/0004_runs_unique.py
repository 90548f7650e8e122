"""One row per pushed run: the same run content pushed again by the same owner for the same
version is the same run, also when two identical pushes race (the loser reads the winner's row).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ux_runs_owner_version_run", "runs", ["owner_id", "version_id", "run_sha256"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ux_runs_owner_version_run", "runs")
