"""The one database file of a process: a writer connection, a reader connection, migrations.

``Database(path)`` opens the file (WAL) twice and no more: ``writer`` for every write (and the
reads that must see a write in progress), ``reader`` for reads that run beside writes (memory
search, the dashboard, listings), which WAL lets read the last commit while a write is under
way. Every store is handed the ``Database`` (or the connection it uses) instead of opening its
own. Both connections are ``SerialConnection``s, so threads may share them: statements take
turns, and a transaction holds the connection until it ends. The migrations are applied once,
here, by whoever opens the file (``migrate``), never by the stores.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from sqlitedb import Migration, SerialConnection, connect, migrate, transaction
from sqlitedb.vacuum import settle

__all__ = ["MMAP_BYTES", "Database"]

# a search reads index pages all over the file: mapped, a page already in the OS's cache costs
# no system call (a quarter off the slowest memory searches at a million notes). Only the
# reader maps: a mapped page read once stays counted in the process's memory.
MMAP_BYTES = 1 << 30


class Database:
    """The file's two connections: ``writer`` and ``reader`` (one and the same in memory)."""

    def __init__(self, path: Path | str, *, migrations: Sequence[Migration] = (),
                 atomic: bool = False) -> None:
        self.path = path
        self.writer: SerialConnection = connect(path)
        # ":memory:" is a new empty database per connection: there, one connection does both
        self.reader: SerialConnection = self.writer
        if str(path) != ":memory:":
            self.reader = connect(path)
            self.reader.execute("PRAGMA query_only=ON")  # a write here is a bug: say so
        self.reader.execute(f"PRAGMA mmap_size={MMAP_BYTES}")  # searches read here
        if migrations:
            self.migrate(migrations, atomic=atomic)

    def migrate(self, migrations: Sequence[Migration], *, atomic: bool = False) -> list[str]:
        """Apply the migrations not applied yet, in order (``sqlitedb.migrate``); then the
        VACUUM a switch to incremental vacuum needs, once (``sqlitedb.vacuum.settle``)."""
        applied = migrate(self.writer, migrations, atomic=atomic)
        settle(self.writer)
        return applied

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Several writes, all or nothing, on the writer (other threads wait their turn)."""
        with transaction(self.writer) as conn:
            yield conn

    def close(self) -> None:
        """Close both connections (a clean close folds the WAL back into the file)."""
        if self.reader is not self.writer:
            self.reader.close()
        self.writer.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
