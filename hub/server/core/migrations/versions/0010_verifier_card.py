"""The verifier card a review measured on a version's label file (JSON text, "" when none).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.add_column(sa.Column("verifier_card", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    op.execute("ALTER TABLE versions DROP COLUMN verifier_card")
