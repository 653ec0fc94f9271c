"""The gateway's durable ledger: inbox, outbox, refusals, buttons and adapter cursors.

Nothing lost, nothing doubled rests on these tables. A message is recorded in the inbox
*before* any work on it, keyed by (platform, chat, message id), so a re-delivered message is
seen as known and one received before a crash is found again at start. A reply is written to
the outbox as numbered parts before the first part is sent, and each part is marked when the
platform accepted it, so a crash mid-reply resumes with the parts not yet sent. An item that
can never succeed (an unreadable message, a part the platform refuses for good) is marked
failed with its reason instead of blocking the rest (``failures``); a chat the platform moved
(a Telegram group upgraded to a supergroup) is remembered, so later sends follow it. Each run
the gateway starts is filed under its chat (``file_run``), so a typed answer finds the
question its chat is waiting on (``runs_of_chat``).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlitedb import transaction
from sqlitedb.database import Database

MIGRATIONS = [
    ("gateway_001_inbox", """
        CREATE TABLE inbox (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'received',
            run_id TEXT,
            route TEXT,
            received_at REAL NOT NULL,
            done_at REAL,
            PRIMARY KEY (platform, chat_id, message_id)
        );
        CREATE INDEX inbox_open ON inbox (status) WHERE status = 'received';
    """),
    ("gateway_002_outbox", """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            reply_key TEXT NOT NULL,
            part_no INTEGER NOT NULL,
            parts INTEGER NOT NULL,
            text TEXT NOT NULL,
            buttons TEXT,
            created_at REAL NOT NULL,
            sent_at REAL,
            platform_message_id TEXT,
            UNIQUE (platform, chat_id, reply_key, part_no)
        );
        CREATE INDEX outbox_unsent ON outbox (platform) WHERE sent_at IS NULL;
    """),
    ("gateway_003_refusals_buttons_cursors", """
        CREATE TABLE refusals (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            refused_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id)
        );
        CREATE TABLE buttons (
            token TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            wait_key TEXT NOT NULL,
            answer TEXT NOT NULL,
            label TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
    """),
    ("gateway_004_failures_and_moved_chats", """
        ALTER TABLE inbox ADD COLUMN error TEXT;
        ALTER TABLE outbox ADD COLUMN failed_at REAL;
        ALTER TABLE outbox ADD COLUMN error TEXT;
        CREATE TABLE moved_chats (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            moved_to TEXT NOT NULL,
            moved_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id)
        );
    """),
    ("gateway_005_inbox_attempts", """
        ALTER TABLE inbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    """),
    # The chat each run was started in: the gateway's own index of which chat waits on what
    # (the run layer keeps no chat notions). Runs answering messages are known already.
    ("gateway_006_run_chats", """
        CREATE TABLE run_chats (
            run_id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            started_at REAL NOT NULL
        );
        CREATE INDEX run_chats_of_chat ON run_chats (platform, chat_id);
        INSERT OR IGNORE INTO run_chats (run_id, platform, chat_id, started_at)
            SELECT run_id, platform, chat_id, received_at FROM inbox WHERE run_id IS NOT NULL;
    """),
]
MAX_MOVES = 5  # a chat moved more often than this is a loop, not a migration


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


@dataclass(frozen=True)
class InboxItem:
    """One message still open in the inbox: its key and its payload as stored (JSON text)."""

    platform: str
    chat_id: str
    message_id: str
    payload: str
    run_id: str | None = None  # set once a turn took it up (a burst's messages share one)
    received_at: float = 0.0


@dataclass(frozen=True)
class Failure:
    """An inbox message or an outbox part marked failed for good, and why."""

    kind: str  # "message" | "part"
    platform: str
    chat_id: str
    item: str  # the message id, or "<reply key> part n/m"
    error: str
    at: float


@dataclass(frozen=True)
class ButtonTarget:
    """What an opaque button token stands for: an answer to one wait of one run."""

    run_id: str
    wait_key: str
    answer: str
    label: str


class Ledger:
    """Inbox, outbox, refusals, button tokens and cursors on one SQLite connection."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer  # the tables' migrations are applied by whoever opened ``db``

    # -- inbox -------------------------------------------------------------------------
    def record(self, platform: str, chat_id: str, message_id: str, user_id: str,
               payload: dict[str, Any]) -> bool:
        """Record an incoming message; False when it was already known (a re-delivery)."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO inbox (platform, chat_id, message_id, user_id, payload,"
            " received_at) VALUES (?, ?, ?, ?, ?, ?)",
            (platform, chat_id, message_id, user_id, json.dumps(payload), time.time()))
        return cur.rowcount == 1

    def set_run(self, platform: str, chat_id: str, message_id: str, run_id: str) -> None:
        """Remember which run is answering this message."""
        self.conn.execute(
            "UPDATE inbox SET run_id = ? WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (run_id, platform, chat_id, message_id))

    def join_run(self, platform: str, chat_id: str, message_ids: list[str],
                 run_id: str) -> None:
        """Remember that one run answers all these messages (a burst: one turn), at once."""
        with transaction(self.conn):
            for message_id in message_ids:
                self.set_run(platform, chat_id, message_id, run_id)

    def finish_all(self, platform: str, chat_id: str, message_ids: list[str], status: str,
                   route: str | None) -> None:
        """Close the messages one reply answered, all at once: a crash leaves all or none."""
        with transaction(self.conn):
            for message_id in message_ids:
                self.finish(platform, chat_id, message_id, status, route)

    def file_run(self, run_id: str, platform: str, chat_id: str) -> None:
        """File a run under the chat it was started in (once; a restart files it again)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO run_chats (run_id, platform, chat_id, started_at)"
            " VALUES (?, ?, ?, ?)", (run_id, platform, chat_id, time.time()))

    def runs_of_chat(self, platform: str, chat_id: str) -> set[str]:
        """The ids of the runs started in this chat."""
        rows = self.conn.execute("SELECT run_id FROM run_chats WHERE platform = ? AND"
                                 " chat_id = ?", (platform, chat_id))
        return {row[0] for row in rows}

    def finish(self, platform: str, chat_id: str, message_id: str, status: str,
               route: str | None) -> None:
        """Close a message: answered, failed (visibly) or ignored."""
        self.conn.execute(
            "UPDATE inbox SET status = ?, route = ?, done_at = ?"
            " WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (status, route, time.time(), platform, chat_id, message_id))

    def fail(self, platform: str, chat_id: str, message_id: str, error: str) -> None:
        """Close a message as failed for good (it is never taken up again), with the reason."""
        self.conn.execute(
            "UPDATE inbox SET status = 'failed', error = ?, done_at = ?"
            " WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (error, time.time(), platform, chat_id, message_id))

    def record_failed(self, platform: str, chat_id: str, message_id: str, user_id: str,
                      payload: dict[str, Any], error: str) -> None:
        """Record a message that could not even be read, as failed from the start."""
        now = time.time()
        self.conn.execute(
            "INSERT OR IGNORE INTO inbox (platform, chat_id, message_id, user_id, payload,"
            " status, error, received_at, done_at) VALUES (?, ?, ?, ?, ?, 'failed', ?, ?, ?)",
            (platform, chat_id, message_id, user_id, json.dumps(payload), error, now, now))

    def take_up(self, platform: str, chat_id: str, message_id: str) -> int:
        """Count one more try at answering an open message (written before the work, so a
        try that crashed the process counts too); how many tries there have been now."""
        row = self.conn.execute(
            "UPDATE inbox SET attempts = attempts + 1"
            " WHERE platform = ? AND chat_id = ? AND message_id = ? RETURNING attempts",
            (platform, chat_id, message_id)).fetchone()
        return int(row[0]) if row else 0

    def give_back(self, platform: str, chat_id: str, message_id: str) -> None:
        """Uncount the try a clean stop interrupted: only a try that crashed counts."""
        self.conn.execute(
            "UPDATE inbox SET attempts = attempts - 1 WHERE platform = ? AND chat_id = ?"
            " AND message_id = ? AND attempts > 0", (platform, chat_id, message_id))

    def status(self, platform: str, chat_id: str, message_id: str) -> str | None:
        """The inbox status of one message, or None if it was never recorded."""
        row = self.conn.execute(
            "SELECT status FROM inbox WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (platform, chat_id, message_id)).fetchone()
        return str(row[0]) if row else None

    def open_messages(self, platform: str) -> list[InboxItem]:
        """Messages received but not yet closed, oldest first, payloads as stored (recovery
        reads each on its own, so one unreadable record cannot stop the others)."""
        rows = self.conn.execute(
            "SELECT platform, chat_id, message_id, payload, run_id, received_at FROM inbox"
            " WHERE status = 'received' AND platform = ? ORDER BY received_at, rowid",
            (platform,)).fetchall()
        return [InboxItem(str(platform), str(chat), str(message), str(payload),
                          None if run_id is None else str(run_id), float(received_at))
                for platform, chat, message, payload, run_id, received_at in rows]

    # -- outbox ------------------------------------------------------------------------
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
            "SELECT id, platform, chat_id, reply_key, part_no, parts, text, buttons, sent_at"
            " FROM outbox WHERE platform = ? AND chat_id = ? AND reply_key = ? ORDER BY part_no",
            (platform, chat_id, reply_key)).fetchall()
        return [_part(row) for row in rows]

    def unsent(self, platform: str) -> list[OutboxPart]:
        """Parts not yet accepted by the platform, in the order they were written."""
        rows = self.conn.execute(
            "SELECT id, platform, chat_id, reply_key, part_no, parts, text, buttons, sent_at"
            " FROM outbox WHERE platform = ? AND sent_at IS NULL AND failed_at IS NULL"
            " ORDER BY id",
            (platform,)).fetchall()
        return [_part(row) for row in rows]

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
        """The most recent messages and parts marked failed for good, newest first."""
        rows = self.conn.execute(
            "SELECT 'message', platform, chat_id, message_id, error, done_at FROM inbox"
            " WHERE status = 'failed' AND error IS NOT NULL"
            " UNION ALL SELECT 'part', platform, chat_id,"
            " reply_key || ' part ' || part_no || '/' || parts, error, failed_at FROM outbox"
            " WHERE failed_at IS NOT NULL ORDER BY 6 DESC LIMIT ?", (limit,)).fetchall()
        return [Failure(str(kind), str(platform), str(chat), str(item), str(error), float(at))
                for kind, platform, chat, item, error, at in rows]

    # -- moved chats -------------------------------------------------------------------
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

    # -- refusals ----------------------------------------------------------------------
    def refuse_once(self, platform: str, chat_id: str) -> bool:
        """True the first time an unknown user is seen in a chat; False ever after."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO refusals (platform, chat_id, refused_at) VALUES (?, ?, ?)",
            (platform, chat_id, time.time()))
        return cur.rowcount == 1

    # -- buttons -----------------------------------------------------------------------
    def button_token(self, run_id: str, wait_key: str, answer: str, label: str) -> str:
        """An opaque, unguessable token (22 chars, fits Telegram's 64 bytes) for one answer."""
        token = secrets.token_urlsafe(16)
        self.conn.execute(
            "INSERT INTO buttons (token, run_id, wait_key, answer, label, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)", (token, run_id, wait_key, answer, label, time.time()))
        return token

    def button(self, token: str) -> ButtonTarget | None:
        """What a pressed token means, or None for a forged or unknown one."""
        row = self.conn.execute(
            "SELECT run_id, wait_key, answer, label FROM buttons WHERE token = ?",
            (token[:64],)).fetchone()
        return ButtonTarget(*row) if row else None

    # -- cursors -----------------------------------------------------------------------
    def cursor(self, name: str) -> str | None:
        """An adapter's saved position (Telegram's update offset, Discord's last message)."""
        row = self.conn.execute("SELECT value FROM cursors WHERE name = ?", (name,)).fetchone()
        return str(row[0]) if row else None

    def set_cursor(self, name: str, value: str) -> None:
        """Move an adapter's saved position."""
        self.conn.execute(
            "INSERT INTO cursors (name, value) VALUES (?, ?)"
            " ON CONFLICT(name) DO UPDATE SET value = excluded.value", (name, value))

    def cursors(self, prefix: str) -> dict[str, str]:
        """Every cursor whose name starts with a prefix."""
        rows = self.conn.execute("SELECT name, value FROM cursors WHERE name LIKE ? ESCAPE '\\'",
                                 (prefix.replace("%", "\\%").replace("_", "\\_") + "%",))
        return {str(name): str(value) for name, value in rows.fetchall()}


def _part(row: tuple[Any, ...]) -> OutboxPart:
    id_, platform, chat_id, reply_key, part_no, parts, text, buttons, sent_at = row
    return OutboxPart(id=id_, platform=platform, chat_id=chat_id, reply_key=reply_key,
                      part_no=part_no, parts=parts, text=text,
                      buttons=json.loads(buttons) if buttons else None, sent=sent_at is not None)
