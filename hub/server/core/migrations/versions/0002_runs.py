"""Pushed evaluation runs (``verihub results push``) and their re-verification queue.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False, unique=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("private", sa.Boolean, nullable=False),
        sa.Column("archive_sha256", sa.String(64), nullable=False),
        sa.Column("run_sha256", sa.String(64), nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("verify_state", sa.String(12), nullable=False),
        sa.Column("verify_report", sa.Text, nullable=False),
        sa.Column("verify_attempts", sa.Integer, nullable=False),
        sa.Column("verify_worker", sa.String(200), nullable=False),
        sa.Column("verify_lease_until", sa.DateTime, nullable=True),
        sa.Column("verified_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_runs_version", "runs", ["version_id"])
    op.create_index("ix_runs_verify_state", "runs", ["verify_state"])


def downgrade() -> None:
    op.drop_table("runs")
