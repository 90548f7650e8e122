"""Alembic migrations of the hub database (applied by :func:`hub.server.core.db.migrate`).

Downgrades drop columns with a plain ``ALTER TABLE ... DROP COLUMN`` (PostgreSQL, SQLite >= 3.35),
never a batch rebuild: rebuilding a table other tables refer to (owners, versions, runs, bounties)
drops it, which SQLite's enforced foreign keys refuse once rows refer to it.
"""
