"""The cursors: where each adapter keeps its place (an update offset, the last message seen).

A plain name -> value table, written by the adapters (handed this store as their
``bot.adapters.base.AdapterCursors``) and by the owner's decisions (the id of the press that
decided a wait). ``together`` is one transaction over the same connection as the inbox, so a
batch of messages recorded and the offset past them land all or nothing.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager

from sqlitedb import transaction
from sqlitedb.database import Database


class Cursors:
    """The ``cursors`` table."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def get(self, name: str) -> str | None:
        """The value kept under ``name``, or None."""
        row = self.conn.execute("SELECT value FROM cursors WHERE name = ?", (name,)).fetchone()
        return str(row[0]) if row else None

    def set(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name``."""
        self.conn.execute(
            "INSERT INTO cursors (name, value) VALUES (?, ?)"
            " ON CONFLICT(name) DO UPDATE SET value = excluded.value", (name, value))

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Every name starting with ``prefix``, with its value."""
        rows = self.conn.execute("SELECT name, value FROM cursors WHERE name LIKE ? ESCAPE '\\'",
                                 (prefix.replace("%", "\\%").replace("_", "\\_") + "%",))
        return {str(name): str(value) for name, value in rows.fetchall()}

    def forget(self, names: list[str]) -> None:
        """Remove every one of ``names`` that is kept."""
        self.conn.executemany("DELETE FROM cursors WHERE name = ?", [(name,) for name in names])

    def together(self) -> AbstractContextManager[sqlite3.Connection]:
        """One transaction over the database's writer, which the inbox writes on too."""
        return transaction(self.conn)
