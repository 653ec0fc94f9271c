"""The outbox's files: the bytes a reply part carries (a booked meeting's ``.ics``), durably.

A reply carries at most one file, on one of its parts (the last text part as its caption, or a
part of its own after the text: ``Outbox.deliver`` decides). The file is written *before* the
reply's parts, keyed by the reply (platform, chat, reply key), so whenever a part exists its
file does too; a crash in between leaves a file whose parts are not written yet, and the same
reply written again under its key keeps the first file and the part it chose (``place``). The
part itself says whether it was sent (``bot.delivery.parts``), so a file is sent exactly as
often as its part: once, in order with the reply's text, or marked failed with it.
"""

from __future__ import annotations

import time
from datetime import datetime

from bot.messages import OutgoingFile
from sqlitedb import transaction
from sqlitedb.database import Database

MIGRATIONS = [
    ("outbox_files_001", """
        CREATE TABLE outbox_files (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            reply_key TEXT NOT NULL,
            part_no INTEGER NOT NULL,
            name TEXT NOT NULL,
            mime TEXT NOT NULL,
            data BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id, reply_key)
        );
    """),
]


class OutboxFiles:
    """The files of outbox parts, on one SQLite connection."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def place(self, platform: str, chat_id: str, reply_key: str, part_no: int,
              file: OutgoingFile) -> int:
        """Keep a reply's file on part ``part_no``; the part it is on (a second write under
        the reply's key keeps the first file and its part)."""
        row = self.conn.execute(
            "INSERT INTO outbox_files (platform, chat_id, reply_key, part_no, name, mime, data,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO UPDATE SET part_no = part_no RETURNING part_no",
            (platform, chat_id, reply_key, part_no, file.name, file.mime, file.data,
             time.time())).fetchone()
        return int(row[0])

    def of_part(self, platform: str, chat_id: str, reply_key: str,
                part_no: int) -> OutgoingFile | None:
        """The file one part carries, or None (a text part)."""
        row = self.conn.execute(
            "SELECT name, mime, data FROM outbox_files WHERE platform = ? AND chat_id = ?"
            " AND reply_key = ? AND part_no = ?",
            (platform, chat_id, reply_key, part_no)).fetchone()
        return OutgoingFile(str(row[0]), str(row[1]), bytes(row[2])) if row else None

    def prune(self, before: datetime, unsent: set[tuple[str, str, str]]) -> dict[str, int]:
        """Remove the files written before ``before``, but those of the replies in ``unsent``
        (``OutboxParts.unsent_replies``: a part still to send carries its file). The rows
        removed."""
        rows = self.conn.execute("SELECT platform, chat_id, reply_key FROM outbox_files"
                                 " WHERE created_at < ?", (before.timestamp(),)).fetchall()
        gone = [tuple(row) for row in rows if tuple(row) not in unsent]
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM outbox_files WHERE platform = ? AND chat_id = ?"
                                  " AND reply_key = ?", gone)
        return {"outbox_files": len(gone)}
