"""Alembic environment: runs the revisions on the connection :func:`hub.server.core.db.migrate` passes."""

from __future__ import annotations

from alembic import context

from hub.server.core.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
