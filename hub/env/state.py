"""Per-rollout SQLite state: a seed database, copied for each rollout, closed when it ends.

::

    seed = SeedDatabase.from_script("CREATE TABLE t(k TEXT PRIMARY KEY, v INT); INSERT ...")
    db = seed.open()                      # this rollout's own copy
    db.execute("UPDATE t SET v = ? WHERE k = ?", (1, "a"))
    db.close()                            # memory freed, or the file removed

A :class:`SeedDatabase` holds the starting database's image in memory (size-capped);
:meth:`SeedDatabase.open` makes a rollout's copy, a private in-memory database
(``storage="memory"``, a memcpy) or a new file in a temporary folder (``storage="file"``). A copy
refuses ``ATTACH``/``DETACH`` (no other file can be opened through SQL) and extension loading.
:func:`snapshot` reads a database table by table for comparing states.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from hub.env.errors import EnvironmentDefinitionError

__all__ = [
    "MAX_SEED_BYTES",
    "RolloutDatabase",
    "SeedDatabase",
    "Snapshot",
    "Storage",
    "StateClosedError",
    "snapshot",
    "snapshot_diff",
    "table_digests",
]

MAX_SEED_BYTES = 64 * 1024 * 1024
"""The largest seed database an environment may load (larger ones are refused at load)."""

Storage = Literal["memory", "file"]
Snapshot = dict[str, list[tuple[Any, ...]]]
"""Table name -> its rows (volatile columns left out), in a canonical order (primary key, or all columns)."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_DENIED = frozenset({sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH})


class StateClosedError(RuntimeError):
    """The rollout's database was used after the rollout ended."""


_WRITES = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE})


def _serialize(conn: sqlite3.Connection) -> bytes:
    """The database's file image (``Connection.serialize`` from Python 3.11, the backup API before)."""
    if sys.version_info >= (3, 11):
        return conn.serialize()
    with tempfile.TemporaryDirectory(prefix="verihub-seed-") as tmp:
        path = Path(tmp) / "seed.sqlite"
        dest = sqlite3.connect(path)
        try:
            conn.backup(dest)
        finally:
            dest.close()
        return path.read_bytes()


def _deserialize(image: bytes) -> sqlite3.Connection:
    """A new in-memory connection holding ``image`` (``deserialize`` from 3.11, the backup API before)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    if sys.version_info >= (3, 11):
        conn.deserialize(image)
        return conn
    with tempfile.TemporaryDirectory(prefix="verihub-seed-") as tmp:
        path = Path(tmp) / "seed.sqlite"
        path.write_bytes(image)
        src = sqlite3.connect(path)
        try:
            src.backup(conn)
        finally:
            src.close()
    return conn


class SeedDatabase:
    """The starting state of a task: a SQLite database image, copied for each rollout."""

    def __init__(self, image: bytes, *, name: str = "seed", max_bytes: int = MAX_SEED_BYTES) -> None:
        if len(image) > max_bytes:
            raise EnvironmentDefinitionError(
                f"seed database {name} is {len(image):,} bytes, over the cap of {max_bytes:,} bytes"
            )
        if not image.startswith(_SQLITE_MAGIC):
            raise EnvironmentDefinitionError(f"seed database {name} is not a SQLite database")
        self.image = image
        self.name = name
        self._digests: dict[tuple[tuple[str, tuple[str, ...]], ...], dict[str, str]] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, max_bytes: int = MAX_SEED_BYTES) -> SeedDatabase:
        """Load a database file; one over ``max_bytes`` is refused before it is read."""
        p = Path(path)
        size = p.stat().st_size
        if size > max_bytes:
            raise EnvironmentDefinitionError(
                f"seed database {p} is {size:,} bytes, over the cap of {max_bytes:,} bytes"
            )
        source = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            return cls(_serialize(source), name=str(p), max_bytes=max_bytes)
        except sqlite3.DatabaseError as exc:
            raise EnvironmentDefinitionError(f"seed database {p} cannot be read: {exc}") from None
        finally:
            source.close()

    @classmethod
    def build(
        cls,
        fill: Callable[[sqlite3.Connection], object],
        *,
        name: str = "seed",
        max_bytes: int = MAX_SEED_BYTES,
    ) -> SeedDatabase:
        """Build the seed in memory with ``fill(connection)`` (create tables, insert rows)."""
        conn = sqlite3.connect(":memory:")
        try:
            with conn:
                fill(conn)
            return cls(_serialize(conn), name=name, max_bytes=max_bytes)
        finally:
            conn.close()

    @classmethod
    def from_script(cls, sql: str, *, name: str = "seed") -> SeedDatabase:
        """Build the seed from an SQL script written by the environment's author."""
        return cls.build(lambda conn: conn.executescript(sql), name=name)

    def open(self, *, storage: Storage = "memory", folder: str | None = None) -> RolloutDatabase:
        """A new private copy of this database for one rollout."""
        if storage == "memory":
            return RolloutDatabase(_deserialize(self.image), path=None)
        if storage == "file":
            fd, path = tempfile.mkstemp(prefix="verihub-state-", suffix=".sqlite", dir=folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(self.image)
                conn = sqlite3.connect(path, check_same_thread=False)
            except BaseException:
                Path(path).unlink(missing_ok=True)
                raise
            return RolloutDatabase(conn, path=path)
        raise EnvironmentDefinitionError(f"storage must be 'memory' or 'file', not {storage!r}")

    def snapshot(self, volatile: Mapping[str, Sequence[str]] | None = None) -> Snapshot:
        db = self.open()
        try:
            return snapshot(db.connection, volatile)
        finally:
            db.close()

    def digests(self, volatile: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
        """:func:`table_digests` of the seed itself (computed once per ``volatile``)."""
        key = tuple(sorted((k, tuple(v)) for k, v in (volatile or {}).items()))
        if key not in self._digests:
            db = self.open()
            try:
                self._digests[key] = table_digests(db.connection, volatile)
            finally:
                db.close()
        return self._digests[key]


class RolloutDatabase:
    """One rollout's copy of the state: the handle its tools receive.

    Tools use bound parameters (``db.execute("... WHERE id = ?", (order_id,))``), never SQL built
    from the model's text. :meth:`transaction` runs one tool call: committed when it returns,
    rolled back when it raises. Calls of one rollout are serialized by a lock, so a call that
    timed out and still runs on its abandoned thread cannot interleave with the next one.
    """

    def __init__(self, conn: sqlite3.Connection, *, path: str | None) -> None:
        self.written: set[str] = set()
        """Tables a statement of this connection may have changed (the others equal the seed)."""
        written = self.written

        def authorize(
            action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
        ) -> int:
            if action in _DENIED:
                return sqlite3.SQLITE_DENY
            if action in _WRITES and arg1 is not None:
                written.add(arg1)
            return sqlite3.SQLITE_OK

        conn.set_authorizer(authorize)
        conn.row_factory = sqlite3.Row
        self._conn: sqlite3.Connection | None = conn
        self.path = path
        self.lock = threading.Lock()
        self._close_pending = False

    @property
    def closed(self) -> bool:
        return self._conn is None

    @property
    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StateClosedError("this rollout's database is closed (the rollout has ended)")
        return self._conn

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
        """All rows of a SELECT as dicts."""
        return [dict(row) for row in self.connection.execute(sql, params).fetchall()]

    def one(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> dict[str, Any] | None:
        """The first row of a SELECT as a dict, or None."""
        row = self.connection.execute(sql, params).fetchone()
        return None if row is None else dict(row)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> int:
        """Run one statement; returns the new row's id for an INSERT, else the rows changed."""
        cur = self.connection.execute(sql, params)
        return int(cur.lastrowid) if sql.lstrip()[:6].upper() == "INSERT" and cur.lastrowid else cur.rowcount

    @contextmanager
    def transaction(self, *, wait_s: float = 5.0) -> Iterator[RolloutDatabase]:
        """One tool call's work: committed on success, rolled back on an exception."""
        if not self.lock.acquire(timeout=wait_s):
            raise StateClosedError("the database is busy with an earlier call that has not finished")
        try:
            conn = self.connection
            try:
                yield self
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        finally:
            self.lock.release()
            if self._close_pending:
                self.close()

    def rollback(self) -> None:
        """Undo the current call's changes (a tool that refuses after writing)."""
        self.connection.rollback()

    def close(self) -> None:
        """Close the connection and remove the file. Safe to call twice, from any thread; while a
        call still runs, the close happens when it finishes."""
        if not self.lock.acquire(blocking=False):
            self._close_pending = True
            return
        try:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
            if self.path is not None:
                Path(self.path).unlink(missing_ok=True)
                for suffix in ("-journal", "-wal", "-shm"):
                    Path(self.path + suffix).unlink(missing_ok=True)
        finally:
            self.lock.release()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(
    conn: sqlite3.Connection, volatile: Mapping[str, Sequence[str]], tables: Iterable[str] | None
) -> dict[str, tuple[list[str], str]]:
    """Table -> (compared columns, ORDER BY clause). A primary key that is compared orders the
    rows by itself (no sort: the table's own order); otherwise every compared column does."""
    wanted = None if tables is None else set(tables)
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    out: dict[str, tuple[list[str], str]] = {}
    for table in names:
        if wanted is not None and table not in wanted:
            continue
        skip = set(volatile.get(table, ()))
        info = [(str(r[1]), int(r[5])) for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]
        cols = [name for name, _ in info if name not in skip]
        key = [name for name, pk in sorted(info, key=lambda x: x[1]) if pk > 0]
        order = key if key and not skip.intersection(key) else cols
        out[table] = (cols, ", ".join(map(_quote, order)))
    return out


def snapshot(
    conn: sqlite3.Connection,
    volatile: Mapping[str, Sequence[str]] | None = None,
    tables: Iterable[str] | None = None,
) -> Snapshot:
    """Every user table's rows (or those of ``tables``), ``volatile`` columns (table -> names)
    left out, rows sorted."""
    volatile = volatile or {}
    wanted = None if tables is None else set(tables)
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    out: Snapshot = {}
    for table in names:
        if wanted is not None and table not in wanted:
            continue
        skip = set(volatile.get(table, ()))
        cols = [
            str(r[1]) for r in conn.execute(f"PRAGMA table_info({_quote(table)})") if str(r[1]) not in skip
        ]
        if not cols:
            out[table] = []
            continue
        listed = ", ".join(map(_quote, cols))
        rows = conn.execute(f"SELECT {listed} FROM {_quote(table)} ORDER BY {listed}").fetchall()
        out[table] = [tuple(r) for r in rows]
    return out


def table_digests(
    conn: sqlite3.Connection,
    volatile: Mapping[str, Sequence[str]] | None = None,
    tables: Iterable[str] | None = None,
) -> dict[str, str]:
    """A SHA-256 of each table's rows as :func:`snapshot` reads them, computed inside SQLite
    (each value ``quote()``-d, so types stay apart): no Python object per row."""
    volatile = volatile or {}
    out: dict[str, str] = {}
    for table, (cols, order) in _columns(conn, volatile, tables).items():
        if not cols:
            out[table] = hashlib.sha256(b"").hexdigest()
            continue
        row = " || char(31) || ".join(f"quote({_quote(c)})" for c in cols)
        inner = f"SELECT {row} AS r FROM {_quote(table)} ORDER BY {order}"
        sql = f"SELECT group_concat(r, char(30)) FROM ({inner})"
        text = conn.execute(sql).fetchone()[0] or ""
        out[table] = hashlib.sha256(str(text).encode()).hexdigest()
    return out


def snapshot_diff(got: Snapshot, want: Snapshot, *, limit: int = 3) -> list[str]:
    """Short lines naming what differs between two snapshots (empty when they are equal)."""
    lines: list[str] = []
    for table in sorted(set(got) | set(want)):
        g, w = got.get(table), want.get(table)
        if g == w:
            continue
        if g is None or w is None:
            lines.append(f"{table}: table {'missing' if g is None else 'unexpected'}")
            continue
        missing = [r for r in w if r not in g]
        extra = [r for r in g if r not in w]
        lines.append(f"{table}: {len(missing)} expected rows missing, {len(extra)} unexpected rows")
        lines += [f"  - {r!r}"[:200] for r in missing[:limit]]
        lines += [f"  + {r!r}"[:200] for r in extra[:limit]]
    return lines
