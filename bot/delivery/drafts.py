"""Replies held for the owner's approval: the ``drafts`` table, sole owner of it.

A message marked ``needs_approval`` (a mail from someone outside the allowlist, one failing
DMARC, one whose Reply-To points elsewhere) is answered as usual, but its answer is kept here
instead of being sent: one row per message, written once (a crash and a second answer find
it and keep the first). The owner's press decides it once (``decide`` changes only a pending
draft), so two presses, or a press replayed after a restart, send nothing twice; a draft
decided "send" whose reply a crash kept from being queued is found again (``to_send``) until
``queued`` says its reply is in the outbox.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime

from bot.messages import OutgoingFile
from sqlitedb.database import Database

PENDING = "pending"  # the owner has not decided
SEND = "send"  # the owner pressed Send; the reply may not be queued yet (a crash between)
QUEUED = "queued"  # the reply is in the outbox, which sends it once
DROPPED = "dropped"  # the owner pressed Don't send

MIGRATIONS = [
    ("drafts_001_create", """
        CREATE TABLE drafts (
            id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            to_chat TEXT NOT NULL,
            sender TEXT NOT NULL,
            their_text TEXT NOT NULL,
            text TEXT NOT NULL,
            file TEXT,
            status TEXT NOT NULL DEFAULT 'pending',
            created_at REAL NOT NULL,
            decided_at REAL,
            decided_by TEXT
        );
        CREATE INDEX drafts_to_send ON drafts (status) WHERE status = 'send';
    """),
]
_COLUMNS = ("id, platform, chat_id, message_id, to_chat, sender, their_text, text, file,"
            " status")


def draft_id(platform: str, chat_id: str, message_id: str) -> str:
    """The draft of one message's answer: the same id however often it is answered."""
    origin = f"{platform}\x1f{chat_id}\x1f{message_id}"
    return hashlib.sha256(origin.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class Draft:
    """One held answer: where it would go (``to_chat`` on ``platform``, under the original
    message's id as its outbox key), who wrote what, and the answer itself."""

    id: str
    platform: str
    chat_id: str
    message_id: str
    to_chat: str
    sender: str  # their name and address: untrusted text
    their_text: str  # the beginning of what they wrote: untrusted text
    text: str
    file: OutgoingFile | None = None
    status: str = PENDING


class Drafts:
    """The ``drafts`` table."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def keep(self, draft: Draft) -> Draft:
        """Keep a new draft; the one already kept for that message when there is one."""
        file = json.dumps(draft.file.to_json()) if draft.file is not None else None
        self.conn.execute(
            f"INSERT OR IGNORE INTO drafts ({_COLUMNS}, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (draft.id, draft.platform, draft.chat_id, draft.message_id, draft.to_chat,
             draft.sender, draft.their_text, draft.text, file, PENDING, time.time()))
        kept = self.get(draft.id)
        assert kept is not None  # just written, or there already
        return kept

    def get(self, id_: str) -> Draft | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM drafts WHERE id = ?",
                                (id_,)).fetchone()
        return _draft(row) if row is not None else None

    def decide(self, id_: str, status: str, by: str) -> bool:
        """Decide a pending draft (``SEND`` or ``DROPPED``); False when it was decided."""
        cur = self.conn.execute(
            "UPDATE drafts SET status = ?, decided_at = ?, decided_by = ?"
            " WHERE id = ? AND status = ?", (status, time.time(), by, id_, PENDING))
        return cur.rowcount == 1

    def queued(self, id_: str) -> None:
        """The reply of a draft decided "send" is in the outbox now."""
        self.conn.execute("UPDATE drafts SET status = ? WHERE id = ? AND status = ?",
                          (QUEUED, id_, SEND))

    def to_send(self) -> list[Draft]:
        """The drafts the owner said to send whose reply is not known to be queued."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM drafts WHERE status = ? ORDER BY created_at",
            (SEND,)).fetchall()
        return [_draft(row) for row in rows]

    def open_ids(self) -> set[str]:
        """The drafts still to decide, or decided "send" and not yet queued."""
        rows = self.conn.execute("SELECT id FROM drafts WHERE status IN (?, ?)", (PENDING, SEND))
        return {str(row[0]) for row in rows}

    def prune(self, before: datetime) -> dict[str, int]:
        """Forget the drafts decided before ``before`` whose reply is queued (the outbox
        keeps what it sends) or that were not sent; a press on one of their buttons says it
        is not valid (anymore). One still open stays. The rows removed."""
        removed = self.conn.execute(
            "DELETE FROM drafts WHERE status IN (?, ?) AND decided_at < ?",
            (QUEUED, DROPPED, before.timestamp())).rowcount
        return {"drafts": removed}


def _draft(row: tuple[object, ...]) -> Draft:
    file = OutgoingFile.from_json(json.loads(str(row[8]))) if row[8] else None
    texts = dict(zip(("id", "platform", "chat_id", "message_id", "to_chat", "sender",
                      "their_text", "text"), (str(value) for value in row[:8]), strict=True))
    return Draft(**texts, file=file, status=str(row[9]))
