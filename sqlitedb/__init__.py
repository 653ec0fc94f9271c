"""Open the one Frontdesk SQLite database, apply each part's ordered migrations, transact.

Every part of Frontdesk (runs, memory, inbox/outbox) keeps its schema as a list of small
migrations under its own name prefix, e.g. ``("runs_001_create", sql)``. They are applied in
order, once, and recorded in the shared ``migrations`` table (the simonw/llm habit) with the
Frontdesk version that applied it, so a later reader can tell which version wrote a migration
it does not know. ``migrate(..., atomic=True)`` applies every pending one in one transaction
(an upgrade that fails leaves the database as it was). ``transaction(conn)`` is the one way to
write several statements all or nothing; a ``connect``ed connection may be shared by threads,
its transactions taking turns (``SerialConnection``). ``Database`` (``sqlitedb.database``)
holds the process's two connections to the file, a writer and a reader; ``open_read_only``
and ``open_file`` are the short-lived looks at a file that the doctor, the upgrade check and
the backups take. Nothing else opens a SQLite file. This module imports nothing of ours, so
``graphs/``, ``memory/`` and ``bot/`` can all build on it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["DB_FILENAME", "Migration", "MigrationError", "SerialConnection", "applied_migrations",
           "connect", "database_path", "migrate", "open_file", "open_read_only",
           "running_version", "transaction"]

Migration = tuple[str, "str | Callable[[sqlite3.Connection], None]"]

DB_FILENAME = "frontdesk.db"
DISTRIBUTION = "frontdesk"  # the installed distribution this package ships in


class MigrationError(sqlite3.DatabaseError):
    """A migration failed; ``name`` is which, the cause is chained."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(f"{name}: {type(cause).__name__}: {cause}")
        self.name = name
        self.cause = cause


@cache
def running_version() -> str:
    """The version of Frontdesk running now, recorded with each migration it applies."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def database_path(home: Path) -> Path:
    """Where the one database file lives inside ``FRONTDESK_HOME``."""
    return home / DB_FILENAME


class SerialConnection(sqlite3.Connection):
    """A connection threads may share: one thread's transaction is never joined by another's.

    A connection has one transaction at a time, whichever thread began it: a statement another
    thread runs meanwhile would land inside it (and be rolled back with it), and another
    ``BEGIN`` would fail. So every statement, and every ``transaction()`` as a whole, holds
    ``lock`` (re-entrant: the statements inside a transaction hold it again). Work handed to
    threads (``asyncio.to_thread``: sync tools, memory search, the dashboard) is why.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lock = threading.RLock()

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        with self.lock:
            return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        with self.lock:
            return super().executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        with self.lock:
            return super().executescript(sql_script)

    def close(self) -> None:
        """Closed once no other thread is inside a statement (closing under one crashes)."""
        with self.lock:
            super().close()


def connect(path: Path | str, *, check_same_thread: bool = False) -> SerialConnection:
    """Open the database in WAL mode with sane defaults for a small concurrent app."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=check_same_thread,
                           timeout=30.0, factory=SerialConnection)
    # a new file is born able to give freed pages back (``sqlitedb.vacuum``): asked before
    # WAL writes the first page; on an existing file it changes nothing until a VACUUM
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def open_read_only(path: Path, *, immutable: bool = False,
                   timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that cannot write, for looking at a file: the doctor's integrity check,
    where a file stands against this version, a backup being checked or copied.
    ``immutable``: the file alone is the whole database (no ``-wal`` beside it), so no
    ``-wal`` or ``-shm`` is made either."""
    mode = "immutable=1" if immutable else "mode=ro"
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?{mode}", uri=True,
                           timeout=timeout)
    conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    return conn


def open_file(path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A plain, short-lived connection to a file that no store serves from: a backup being
    written, a database folded (its WAL checkpointed) before it is kept aside."""
    return sqlite3.connect(str(path), timeout=timeout)


_UNSHARED = contextlib.nullcontext()  # a plain connection: the caller keeps it to one thread


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any exception (then re-raised).

    The connection is in autocommit mode (``connect``), so a single statement needs none of
    this; several that must land together do. IMMEDIATE takes the write lock up front, so two
    processes never deadlock upgrading a read to a write. On a ``SerialConnection`` the whole
    transaction holds its lock, so threads sharing the connection take turns; one begun inside
    another in the same thread (a store's write inside another store's transaction: the
    Telegram intake records a batch and its offset together) joins it as a savepoint.
    """
    lock = conn.lock if isinstance(conn, SerialConnection) else _UNSHARED
    with lock:
        if conn.in_transaction:  # nested in this thread's own (the lock is ours): joins it
            with _savepoint(conn):
                yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:  # never leave it open: every later write would join it
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


@contextmanager
def _savepoint(conn: sqlite3.Connection) -> Iterator[None]:
    """A transaction inside another on the same connection (one store's inside another's, now
    that they share the writer): its writes land with the outer one, or are undone alone."""
    conn.execute("SAVEPOINT nested")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO nested")
        conn.execute("RELEASE nested")
        raise
    conn.execute("RELEASE nested")


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration], *,
            atomic: bool = False) -> list[str]:
    """Apply the migrations not yet recorded, in order; return the names applied now.

    Each migration runs in its own transaction together with its record, so a crash leaves
    either both or neither; with ``atomic`` all of them run in one transaction, so a failure
    leaves none. A failure raises ``MigrationError`` naming the migration.
    """
    if atomic:
        with transaction(conn):
            _prepare_table(conn)
            return [name for name, step in migrations if _apply(conn, name, step)]
    if "version" not in _columns(conn):  # a read first: most opens find the table as it is
        with transaction(conn):
            _prepare_table(conn)
    applied: list[str] = []
    for name, step in migrations:
        with transaction(conn):
            if _apply(conn, name, step):
                applied.append(name)
    return applied


def applied_migrations(conn: sqlite3.Connection) -> dict[str, str | None]:
    """Every recorded migration's name and the version that applied it (None: not recorded,
    as before versions were); empty when the database has no ``migrations`` table yet."""
    tables = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone()
    if tables is None:
        return {}
    if "version" not in _columns(conn):
        return {row[0]: None for row in conn.execute("SELECT name FROM migrations")}
    return {row[0]: row[1] for row in conn.execute("SELECT name, version FROM migrations")}


def _columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(migrations)")}


def _prepare_table(conn: sqlite3.Connection) -> None:
    """The ``migrations`` table, with its ``version`` column (added to a table made before)."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY,"
                 " applied_at REAL NOT NULL, version TEXT)")
    if "version" not in _columns(conn):
        conn.execute("ALTER TABLE migrations ADD COLUMN version TEXT")


def _apply(conn: sqlite3.Connection, name: str,
           step: str | Callable[[sqlite3.Connection], None]) -> bool:
    """Run one migration and record it, inside the caller's transaction; False: done before."""
    if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
        return False
    try:
        if isinstance(step, str):
            for statement in _statements(step):
                conn.execute(statement)
        else:
            step(conn)
    except Exception as exc:
        raise MigrationError(name, exc) from exc
    conn.execute("INSERT INTO migrations (name, applied_at, version) VALUES (?, ?, ?)",
                 (name, time.time(), running_version()))
    return True


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
