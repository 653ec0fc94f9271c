"""Which rows belong to which scope: each scope's number, its range of row ids, fresh ids.

Every scope (the owner, a person, a chat) gets a number in ``memory_scopes``, and its rows
take ids in ``[number * STRIDE, (number + 1) * STRIDE)``; the owner is number 0, so the
owner's note ids are simply 1, 2, 3… Each scope counts the ids it has issued per table
(``last_note``, ``last_history``: the offset of its newest id in its range), so a fresh id is
one ``UPDATE … RETURNING``, and every id a scope holds is at most its count.

Every id stays at most ``MAX_ID`` (exact in any JSON reader, so an export can be read back):
no scope is numbered above ``LAST_NUMBER``. A scope name has one of the shapes Frontdesk
makes (``is_scope``), so a file cannot bring in a look-alike of one.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

STRIDE = 1_000_000_000
MAX_ID = 2**53 - 1
LAST_NUMBER = MAX_ID // STRIDE - 1  # the last scope whose whole range is at most MAX_ID

# The shapes bot/chat/senders.py makes: "owner", "<platform>:<user id>" and a chat's history,
# "<platform>:chat:<chat id>". A platform is a lowercase word and an id visible ASCII, so
# nothing that hides, reorders or only looks like another scope ("owner\u202e", "owner\n",
# "\x1b[2Jowner", a Cyrillic "о") has the shape of one.
_SCOPE = re.compile(r"owner|[a-z][a-z0-9_-]{0,31}:[!-~]{1,128}")


@dataclass(frozen=True)
class Table:
    """The names one searchable table goes by: rows, index, owner column, id sequence."""

    rows: str
    fts: str
    owner_column: str
    sequence: str


NOTES = Table("memory_notes", "memory_notes_fts", "scope", "last_note")
HISTORY = Table("memory_history", "memory_history_fts", "chat", "last_history")


def is_scope(name: str) -> bool:
    """Whether ``name`` has the shape of a scope Frontdesk makes."""
    return _SCOPE.fullmatch(name) is not None


def reserve(conn: sqlite3.Connection, table: Table, scope: str, count: int) -> int:
    """Inside a transaction: the first of ``count`` fresh ids in ``scope``'s range."""
    conn.execute("INSERT OR IGNORE INTO memory_scopes (scope, number) "
                 "VALUES (?, (SELECT MAX(number) + 1 FROM memory_scopes))", (scope,))
    number, last = conn.execute(
        f"UPDATE memory_scopes SET {table.sequence} = {table.sequence} + ? "
        f"WHERE scope = ? RETURNING number, {table.sequence}", (count, scope)).fetchone()
    if last >= STRIDE:
        raise OverflowError(f"scope {scope!r} is full ({STRIDE - 1:,} rows)")
    _check_number(int(number))
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
    _check_number(number)
    return number


def _check_number(number: int) -> None:
    """Refuse a scope number whose ids could pass MAX_ID (the transaction is rolled back)."""
    if number > LAST_NUMBER:
        raise OverflowError(f"no scope numbers left (the last is {LAST_NUMBER:,})")


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
