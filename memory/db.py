"""Where the one database lives and how it is opened: ``sqlitedb``'s helpers, for the bot."""

from __future__ import annotations

from sqlitedb import DB_FILENAME, Migration, connect, database_path, migrate, transaction

__all__ = ["DB_FILENAME", "Migration", "connect", "database_path", "migrate", "transaction"]
