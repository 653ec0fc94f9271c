"""A real Memory on a real SQLite file in the test's temporary directory."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.notes import Memory
from memory.schema import MIGRATIONS
from sqlitedb.database import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """The file with memory's migrations applied, as a process that keeps only notes opens it."""
    database = Database(tmp_path / "frontdesk.db", migrations=MIGRATIONS)
    yield database
    database.close()


@pytest.fixture
def conn(db: Database) -> sqlite3.Connection:
    return db.writer


@pytest.fixture
def memory(db: Database) -> Memory:
    return Memory(db)
