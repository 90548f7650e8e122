"""Alembic migrations of the hub database (applied by :func:`hub.server.core.db.migrate`)."""
