"""Install counts: ``versions.downloads``, the times a version's wheel or sdist was downloaded
from ``/files/`` (see :func:`hub.server.packages.index.file_route` for what counts). Only the
number is kept: nothing about who asked. An environment's count is the sum of its versions'.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.add_column(sa.Column("downloads", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    op.execute("ALTER TABLE versions DROP COLUMN downloads")
