"""The messages a live reply has shown in a chat before its final text: the ``live_messages``
table, so the final delivery (after a crash too) edits them rather than leaving them partial.

A partial message is recorded the moment the platform accepted it, under the reply's key and
its place among the reply's parts (``part_no``), before anything else; the outbox delivers
part *n* of the final text as an edit of live message *n* and then forgets it (``settle``).
Live messages past the final's last part are deleted and forgotten. The only window for a
message left partial is a crash between the platform's accept and this one SQLite write, the
same window the outbox has for a part sent twice.
"""

from __future__ import annotations

import time
from datetime import datetime

from sqlitedb.database import Database

MIGRATIONS = [
    ("live_001_messages", """
        CREATE TABLE live_messages (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            reply_key TEXT NOT NULL,
            part_no INTEGER NOT NULL,
            platform_message_id TEXT NOT NULL,
            shown_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id, reply_key, part_no)
        );
    """),
]


class LiveMessages:
    """The partial messages still showing, by reply (on the database's writer)."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def add(self, platform: str, chat_id: str, reply_key: str, part_no: int,
            message_id: str) -> None:
        """A partial message was accepted by the platform as part ``part_no`` of a reply."""
        self.conn.execute(
            "INSERT OR REPLACE INTO live_messages (platform, chat_id, reply_key, part_no,"
            " platform_message_id, shown_at) VALUES (?, ?, ?, ?, ?, ?)",
            (platform, chat_id, reply_key, part_no, message_id, time.time()))

    def of(self, platform: str, chat_id: str, reply_key: str) -> dict[int, str]:
        """A reply's partial messages still showing: part number -> the platform's id."""
        rows = self.conn.execute(
            "SELECT part_no, platform_message_id FROM live_messages"
            " WHERE platform = ? AND chat_id = ? AND reply_key = ?",
            (platform, chat_id, reply_key)).fetchall()
        return {int(part_no): str(message_id) for part_no, message_id in rows}

    def settle(self, platform: str, chat_id: str, reply_key: str, part_no: int) -> None:
        """That message shows final text now (or is gone): nothing more to do for it."""
        self.conn.execute(
            "DELETE FROM live_messages WHERE platform = ? AND chat_id = ? AND reply_key = ?"
            " AND part_no = ?", (platform, chat_id, reply_key, part_no))

    def prune(self, before: datetime) -> dict[str, int]:
        """Remove what is left of partial messages shown before ``before`` (a reply settles
        its own; a crash may leave some). The rows removed."""
        removed = self.conn.execute("DELETE FROM live_messages WHERE shown_at < ?",
                                    (before.timestamp(),)).rowcount
        return {"live_messages": removed}
