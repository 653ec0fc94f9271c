"""Open the one Frontdesk SQLite database, apply each part's ordered migrations, transact.

Every part of Frontdesk (runs, memory, inbox/outbox) keeps its schema as a list of small
migrations under its own name prefix, e.g. ``("runs_001_create", sql)``. They are applied in
order, once, and recorded in the shared ``migrations`` table (the simonw/llm habit).
``transaction(conn)`` is the one way to write several statements all or nothing. This module
imports nothing of ours, so ``graphs/``, ``memory/`` and ``bot/`` can all build on it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["DB_FILENAME", "Migration", "connect", "database_path", "migrate", "transaction"]

Migration = tuple[str, "str | Callable[[sqlite3.Connection], None]"]

DB_FILENAME = "frontdesk.db"


def database_path(home: Path) -> Path:
    """Where the one database file lives inside ``FRONTDESK_HOME``."""
    return home / DB_FILENAME


def connect(path: Path | str, *, check_same_thread: bool = False) -> sqlite3.Connection:
    """Open the database in WAL mode with sane defaults for a small concurrent app."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=check_same_thread,
                           timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any exception (then re-raised).

    The connection is in autocommit mode (``connect``), so a single statement needs none of
    this; several that must land together do. IMMEDIATE takes the write lock up front, so two
    processes never deadlock upgrading a read to a write.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations not yet recorded, in order; return the names applied now.

    Each migration runs in its own transaction together with its record, so a crash leaves
    either both or neither.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    applied: list[str] = []
    for name, step in migrations:
        with transaction(conn):
            done = conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone()
            if done is None:
                if isinstance(step, str):
                    for statement in _statements(step):
                        conn.execute(statement)
                else:
                    step(conn)
                conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                             (name, time.time()))
                applied.append(name)
    return applied


def _statements(script: str) -> list[str]:
    """Split a migration script into complete statements (``executescript`` would COMMIT)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
