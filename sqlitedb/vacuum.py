"""Giving freed pages back: the file set up for incremental vacuum, and the pages reclaimed.

SQLite keeps the pages a ``DELETE`` frees inside the file for later rows; the file never
shrinks by itself. With ``auto_vacuum=INCREMENTAL`` a ``PRAGMA incremental_vacuum`` hands them
back to the file system, which the retention does after each prune, a few thousand pages a
step. The mode is a property of
the file: a new file is born with it (``connect`` asks for it before the first page is
written), and an existing one is switched by the migration below, which only takes effect
with a ``VACUUM``: that cannot run inside the migrations' transaction, so ``settle`` runs it
once they have committed, whenever the migration is recorded and the file is not switched yet
(so a crash between the two is made good at the next open).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time

from sqlitedb import Migration

__all__ = ["INCREMENTAL", "MIGRATIONS", "fold_wal", "reclaim", "settle"]

INCREMENTAL = 2  # what ``PRAGMA auto_vacuum`` reads on a file set up for it
SWITCH = "sqlitedb_001_incremental_vacuum"
RECLAIM_PAGES = 4096  # pages given back per step (16 MB of 4 KiB pages)
RECLAIM_PAUSE_S = 0.005

MIGRATIONS: list[Migration] = [
    # Asked for here, taken up by the VACUUM ``settle`` runs after the transaction commits.
    (SWITCH, "PRAGMA auto_vacuum=INCREMENTAL"),
]


def settle(conn: sqlite3.Connection) -> bool:
    """VACUUM a file whose switch to incremental vacuum is recorded but not yet made (once per
    file: the first open after the upgrade); True when it did. Outside any transaction."""
    recorded = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND"
                            " name = 'migrations'").fetchone() and conn.execute(
        "SELECT 1 FROM migrations WHERE name = ?", (SWITCH,)).fetchone()
    if not recorded or conn.execute("PRAGMA auto_vacuum").fetchone()[0] == INCREMENTAL:
        return False
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # per connection until the VACUUM
    conn.execute("VACUUM")
    return True


def reclaim(conn: sqlite3.Connection, pages: int = RECLAIM_PAGES,
            pause: float = RECLAIM_PAUSE_S) -> int:
    """Hand the free pages back to the file system (after a prune); how many there were.
    ``pages`` at a time, each step its own transaction, so a write waiting for the connection
    (the running bot's) goes between two steps. The WAL is checkpointed too, so the file on
    disk is the smaller one."""
    turn = getattr(conn, "lock", contextlib.nullcontext())  # a SerialConnection's
    with turn:
        free = left = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    while left > 0:
        with turn:
            # run to its end by sqlite3_exec: stepped once, as ``execute`` does, the pragma
            # frees a single page
            conn.executescript(f"PRAGMA incremental_vacuum({int(pages)});")
            now_free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        if now_free >= left:  # nothing more to give back (pages freed since, by others)
            break
        left = now_free
        time.sleep(pause)  # the lock is not fair: let a waiting write in
    fold_wal(conn)
    return free


def fold_wal(conn: sqlite3.Connection) -> bool:
    """Checkpoint the WAL into the file and truncate it, without waiting on anyone: True when
    it was all folded. A TRUNCATE checkpoint takes the write lock and then waits (the busy
    timeout, 30 s) for every reader's snapshot to end, holding every writer off meanwhile;
    with the running bot reading, its writes stalled that long. Asked to wait for nothing, it
    folds what it can as PASSIVE does, and the WAL is folded another time."""
    with getattr(conn, "lock", contextlib.nullcontext()):  # the timeout is the connection's
        wait_ms = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        conn.execute("PRAGMA busy_timeout=0")
        try:
            blocked = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            conn.execute(f"PRAGMA busy_timeout={wait_ms}")
    return not blocked
