"""A real Memory on a real SQLite file in the test's temporary directory."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.notes import Memory
from sqlitedb import connect


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = connect(tmp_path / "frontdesk.db")
    yield connection
    connection.close()


@pytest.fixture
def memory(conn: sqlite3.Connection) -> Memory:
    return Memory(conn)
