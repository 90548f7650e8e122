"""Per-version metadata kept at publish: the README rendered once (sanitised HTML), and the
summary, tags and licence, so that pages show those of the newest reviewed version.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_COLUMNS = ("readme_html", "summary", "tags", "license")


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        for name in _COLUMNS:
            batch.add_column(sa.Column(name, sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    for name in _COLUMNS:
        op.execute(f"ALTER TABLE versions DROP COLUMN {name}")
