"""The outbox's parts: each reply written as numbered parts before the first is sent.

Each part is marked the moment the platform accepts it, so a crash mid-reply resumes with the
parts not yet sent, and a second write under the same reply key returns the first (a reply is
queued once). A part the platform refuses for good is marked failed with its reason instead of
blocking the rest. A chat the platform moved (a Telegram group upgraded to a supergroup) is
remembered in ``moved_chats``, so later sends follow it.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.delivery.inbox import Failure
from sqlitedb import transaction
from sqlitedb.database import Database

MAX_MOVES = 5  # a chat moved more often than this is a loop, not a migration
PART_COLUMNS = "id, platform, chat_id, reply_key, part_no, parts, text, buttons, sent_at"


@dataclass(frozen=True)
class OutboxPart:
    """One numbered part of a reply, and whether the platform has accepted it yet."""

    id: int
    platform: str
    chat_id: str
    reply_key: str
    part_no: int
    parts: int
    text: str
    buttons: list[dict[str, str]] | None
    sent: bool

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> OutboxPart:
        """A part as ``PART_COLUMNS`` reads it."""
        buttons = json.loads(row[7]) if row[7] else None
        return cls(id=row[0], platform=row[1], chat_id=row[2], reply_key=row[3],
                   part_no=row[4], parts=row[5], text=row[6], buttons=buttons,
                   sent=row[8] is not None)

    @property
    def send_key(self) -> str:
        """What the platform is told this part is: the same on every resend of it, never the
        same for two parts (the row id alone could come back once old rows are pruned: a mail's
        Message-ID is made from it). 25 characters at most: Discord's nonce."""
        what = f"{self.platform}|{self.chat_id}|{self.reply_key}|{self.part_no}"
        return f"fd{self.id}.{hashlib.sha256(what.encode()).hexdigest()}"[:25]


class OutboxParts:
    """The ``outbox`` and ``moved_chats`` tables."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def enqueue(self, platform: str, chat_id: str, reply_key: str, parts: list[str],
                buttons: list[dict[str, str]] | None = None) -> list[OutboxPart]:
        """Write a reply's parts once; a second call with the same key returns the first."""
        now = time.time()
        with transaction(self.conn):
            for number, text in enumerate(parts, start=1):
                last = number == len(parts)
                self.conn.execute(
                    "INSERT OR IGNORE INTO outbox (platform, chat_id, reply_key, part_no, parts,"
                    " text, buttons, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (platform, chat_id, reply_key, number, len(parts), text,
                     json.dumps(buttons) if buttons and last else None, now))
        return self.parts(platform, chat_id, reply_key)

    def parts(self, platform: str, chat_id: str, reply_key: str) -> list[OutboxPart]:
        """All parts of one reply, in order."""
        rows = self.conn.execute(
            f"SELECT {PART_COLUMNS} FROM outbox WHERE platform = ? AND chat_id = ?"
            " AND reply_key = ? ORDER BY part_no", (platform, chat_id, reply_key)).fetchall()
        return [OutboxPart.from_row(row) for row in rows]

    def unsent(self, platform: str) -> list[OutboxPart]:
        """Parts not yet accepted by the platform, in the order they were written."""
        rows = self.conn.execute(
            f"SELECT {PART_COLUMNS} FROM outbox WHERE platform = ? AND sent_at IS NULL"
            " AND failed_at IS NULL ORDER BY id", (platform,)).fetchall()
        return [OutboxPart.from_row(row) for row in rows]

    def mark_sent(self, part_id: int, platform_message_id: str | None) -> None:
        """The platform accepted this part: it must never be sent again."""
        self.conn.execute(
            "UPDATE outbox SET sent_at = ?, platform_message_id = ? WHERE id = ?",
            (time.time(), platform_message_id, part_id))

    def mark_failed(self, part_id: int, error: str) -> None:
        """The platform refused this part for good: it is never tried again."""
        self.conn.execute("UPDATE outbox SET failed_at = ?, error = ? WHERE id = ?",
                          (time.time(), error, part_id))

    def failures(self, limit: int = 20) -> list[Failure]:
        """The most recent parts marked failed for good, newest first."""
        rows = self.conn.execute(
            "SELECT platform, chat_id, reply_key || ' part ' || part_no || '/' || parts,"
            " error, failed_at FROM outbox WHERE failed_at IS NOT NULL"
            " ORDER BY failed_at DESC LIMIT ?", (limit,)).fetchall()
        return [Failure("part", str(platform), str(chat), str(item), str(error), float(at))
                for platform, chat, item, error, at in rows]

    def move_chat(self, platform: str, chat_id: str, moved_to: str) -> None:
        """The platform moved a chat (a group upgraded to a supergroup): send there from now."""
        self.conn.execute(
            "INSERT INTO moved_chats (platform, chat_id, moved_to, moved_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(platform, chat_id) DO UPDATE SET moved_to = excluded.moved_to,"
            " moved_at = excluded.moved_at", (platform, chat_id, moved_to, time.time()))

    def chat_now(self, platform: str, chat_id: str) -> str:
        """Where a chat is now: ``chat_id`` itself, or where the platform moved it."""
        for _ in range(MAX_MOVES):
            row = self.conn.execute(
                "SELECT moved_to FROM moved_chats WHERE platform = ? AND chat_id = ?",
                (platform, chat_id)).fetchone()
            if row is None:
                break
            chat_id = str(row[0])
        return chat_id

    def prune(self, before: datetime) -> dict[str, int]:
        """Remove the parts sent (or failed for good) before ``before``; an unsent part stays
        until it is sent. The rows removed."""
        cutoff = before.timestamp()
        removed = self.conn.execute(
            "DELETE FROM outbox WHERE sent_at < ? OR (sent_at IS NULL AND failed_at < ?)",
            (cutoff, cutoff)).rowcount
        return {"outbox": removed}

    def unsent_replies(self) -> set[tuple[str, str, str]]:
        """(platform, chat, reply key) of every reply with a part still to send."""
        rows = self.conn.execute("SELECT DISTINCT platform, chat_id, reply_key FROM outbox"
                                 " WHERE sent_at IS NULL AND failed_at IS NULL")
        return {(str(platform), str(chat), str(key)) for platform, chat, key in rows}
