"""The initial hub schema: owners, members, tokens, environments, versions, files, jobs.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "owners",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "members",
        sa.Column("org_id", sa.Integer, sa.ForeignKey("owners.id"), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("owners.id"), primary_key=True),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("salt", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=True),
        sa.Column("revoked_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "environments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("owners.id"), nullable=False),
        sa.Column("env_id", sa.String(100), nullable=False),
        sa.Column("distribution", sa.String(200), nullable=False),
        sa.Column("project", sa.String(200), nullable=False, unique=True),
        sa.Column("private", sa.Boolean, nullable=False),
        sa.Column("flagged", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("license", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("owner_id", "env_id"),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("environment_id", sa.Integer, sa.ForeignKey("environments.id"), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("manifest_sha256", sa.String(80), nullable=False),
        sa.Column("content_hash", sa.String(80), nullable=False),
        sa.Column("requires_python", sa.String(100), nullable=False),
        sa.Column("readme", sa.Text, nullable=False),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("report", sa.Text, nullable=False),
        sa.Column("yanked", sa.Boolean, nullable=False),
        sa.Column("yank_reason", sa.Text, nullable=False),
        sa.Column("uploaded_at", sa.DateTime, nullable=False),
        sa.Column("reviewed_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("environment_id", "version"),
    )
    op.create_table(
        "files",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("metadata_sha256", sa.String(64), nullable=False),
    )
    op.create_index("ix_files_version", "files", ["version_id"])
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False, unique=True),
        sa.Column("state", sa.String(8), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("worker", sa.String(200), nullable=False),
        sa.Column("lease_until", sa.DateTime, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=True),
        sa.Column("finished_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_jobs_state", "jobs", ["state"])


def downgrade() -> None:
    for table in ("jobs", "files", "versions", "environments", "tokens", "members", "owners"):
        op.drop_table(table)
