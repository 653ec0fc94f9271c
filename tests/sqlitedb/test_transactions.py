"""Transactions on the one writer: a store's transaction inside another's joins it (a
savepoint), and a COMMIT that fails never leaves the shared connection inside a transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sqlitedb import transaction
from sqlitedb.database import Database


def test_a_transaction_inside_another_joins_it_and_can_fail_alone(tmp_path: Path) -> None:
    db = Database(tmp_path / "f.db")
    conn = db.writer
    conn.execute("CREATE TABLE t (x INTEGER)")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), transaction(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise ValueError("the inner one fails")
        with transaction(conn):
            conn.execute("INSERT INTO t VALUES (3)")
        assert conn.in_transaction
    assert not conn.in_transaction
    assert [row[0] for row in conn.execute("SELECT x FROM t ORDER BY x")] == [1, 3]
    other = Database(tmp_path / "f.db")  # another process's view: all of it committed
    assert [row[0] for row in other.reader.execute("SELECT x FROM t ORDER BY x")] == [1, 3]


def test_a_failed_commit_leaves_no_transaction_open(tmp_path: Path) -> None:
    db = Database(tmp_path / "f.db")
    conn = db.writer
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TABLE child (parent INTEGER REFERENCES parent (id)"
                 " DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError), transaction(conn):
        conn.execute("INSERT INTO child VALUES (7)")  # checked only at COMMIT
    assert not conn.in_transaction
    with transaction(conn):  # the next writer is not refused "within a transaction"
        conn.execute("INSERT INTO parent VALUES (1)")
    assert conn.execute("SELECT count(*) FROM child").fetchone()[0] == 0
