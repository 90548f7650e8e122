"""Alembic migrations of the hub database (applied by :func:`hub.server.db.migrate`)."""
