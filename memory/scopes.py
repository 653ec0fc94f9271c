"""Which rows belong to which scope: each scope's number, its range of row ids, fresh ids.

Every scope (the owner, a person, a chat) gets a number in ``memory_scopes``, and its rows
take ids in ``[number * STRIDE, (number + 1) * STRIDE)``; the owner is number 0, so the
owner's note ids are simply 1, 2, 3… Each scope counts the ids it has issued per table
(``last_note``, ``last_history``: the offset of its newest id in its range), so a fresh id is
one ``UPDATE … RETURNING``, and every id a scope holds is at most its count.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

STRIDE = 1_000_000_000


@dataclass(frozen=True)
class Table:
    """The names one searchable table goes by: rows, index, owner column, id sequence."""

    rows: str
    fts: str
    owner_column: str
    sequence: str


NOTES = Table("memory_notes", "memory_notes_fts", "scope", "last_note")
HISTORY = Table("memory_history", "memory_history_fts", "chat", "last_history")


def reserve(conn: sqlite3.Connection, table: Table, scope: str, count: int) -> int:
    """Inside a transaction: the first of ``count`` fresh ids in ``scope``'s range."""
    conn.execute("INSERT OR IGNORE INTO memory_scopes (scope, number) "
                 "VALUES (?, (SELECT MAX(number) + 1 FROM memory_scopes))", (scope,))
    number, last = conn.execute(
        f"UPDATE memory_scopes SET {table.sequence} = {table.sequence} + ? "
        f"WHERE scope = ? RETURNING number, {table.sequence}", (count, scope)).fetchone()
    if last >= STRIDE:
        raise OverflowError(f"scope {scope!r} is full ({STRIDE - 1:,} rows)")
    return int(number) * STRIDE + int(last) - count + 1


def scope_number(conn: sqlite3.Connection, scope: str, wanted: int, floor: int = 0) -> int:
    """Inside a transaction: ``scope``'s number. A new scope gets ``wanted`` if that number is
    free (so notes moved between databases can keep their ids), else the next number above
    every one in use and ``floor`` (so it takes no number another newcomer wants)."""
    row = conn.execute("SELECT number FROM memory_scopes WHERE scope = ?", (scope,)).fetchone()
    if row is not None:
        return int(row[0])
    taken = conn.execute("SELECT 1 FROM memory_scopes WHERE number = ?", (wanted,)).fetchone()
    number: int = conn.execute(
        "INSERT INTO memory_scopes (scope, number) VALUES "
        "(?, COALESCE(?, MAX((SELECT MAX(number) + 1 FROM memory_scopes), ?))) RETURNING number",
        (scope, None if taken or wanted < 0 else wanted, floor)).fetchone()[0]
    return number


def claim(conn: sqlite3.Connection, table: Table, scope: str, row_id: int) -> None:
    """Inside a transaction: count ``row_id``, an id of ``scope``'s range taken as it is, as
    issued, so ``reserve`` never hands it out again."""
    conn.execute(f"UPDATE memory_scopes SET {table.sequence} = MAX({table.sequence}, ?) "
                 "WHERE scope = ?", (row_id % STRIDE, scope))


def scope_range(conn: sqlite3.Connection, scope: str) -> tuple[int, int] | None:
    """The id range that belongs to ``scope``; None if it has never written anything."""
    row = conn.execute("SELECT number FROM memory_scopes WHERE scope = ?", (scope,)).fetchone()
    if row is None:
        return None
    return row[0] * STRIDE, row[0] * STRIDE + STRIDE - 1
