"""Versions unique as PEP 440 versions, and bounty specifications rendered once.

``versions.version_key`` holds the canonical form of the
version (``0.1``, ``0.1.0`` and ``0.1.0.0`` share it), unique per environment, so that two racing
pushes of one version cannot both land.

Existing rows are keyed here. Where an older hub already holds two spellings of one version, the
first keeps the canonical key and each later one is keyed ``KEY~ID`` (they stay published, and
the constraint holds for every new push).

``bounties.spec_html`` holds the specification rendered and sanitised when it is saved; existing
bounties get '' and are rendered on their first view (:func:`hub.server.bounties.workflow.spec_html`).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from packaging.utils import canonicalize_version

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_INDEX = "ux_versions_env_version_key"


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.add_column(sa.Column("version_key", sa.String(80), nullable=False, server_default=""))
    conn = op.get_bind()
    versions = sa.table(
        "versions",
        sa.column("id", sa.Integer),
        sa.column("environment_id", sa.Integer),
        sa.column("version", sa.String),
        sa.column("version_key", sa.String),
    )
    rows = conn.execute(
        sa.select(versions.c.id, versions.c.environment_id, versions.c.version).order_by(versions.c.id)
    ).all()
    seen: set[tuple[int, str]] = set()
    for row_id, env_id, version in rows:
        key = canonicalize_version(version, strip_trailing_zero=True)
        if (env_id, key) in seen:
            key = f"{key}~{row_id}"
        seen.add((env_id, key))
        conn.execute(sa.update(versions).where(versions.c.id == row_id).values(version_key=key))
    op.create_index(_INDEX, "versions", ["environment_id", "version_key"], unique=True)
    with op.batch_alter_table("bounties") as batch:
        batch.add_column(sa.Column("spec_html", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    op.execute("ALTER TABLE bounties DROP COLUMN spec_html")
    op.drop_index(_INDEX, "versions")
    op.execute("ALTER TABLE versions DROP COLUMN version_key")
