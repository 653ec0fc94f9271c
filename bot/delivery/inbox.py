"""The inbox: every message recorded before any work on it, and the strangers refused once.

A message is keyed by (platform, chat, message id), so a re-delivered one is seen as known
(``record`` is False) and one received before a crash is found again at start
(``open_messages``). Each try at answering is counted before the work (``take_up``), so a
message that crashed the process again and again is set aside (``fail``) instead of blocking
the rest; an update that cannot even be read is recorded as failed from the start. The
``refusals`` table remembers the chats where a stranger got their one refusal.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlitedb import transaction
from sqlitedb.database import Database

# How long after it first came a platform may deliver the same message again, so its key is
# kept at least that long (the payload goes at FRONTDESK_KEEP_DAYS all the same). Telegram
# keeps an update it was not told was received for 24 hours (polling and webhook alike);
# Discord re-delivers nothing, but the read-back after a time away reads a channel from its
# cursor, which a message answered live may not have passed yet: a month is ample. The
# console's lines never come twice.
DAY_S = 86_400.0
REDELIVERY: dict[str, float] = {"telegram": DAY_S, "discord": 30 * DAY_S, "console": 0.0}
REDELIVERY_ELSE = 30 * DAY_S  # a platform not listed: as careful as the most careful


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
class Sender:
    """One chat of a platform as its inbox knows it: how many messages, the last one's time
    and the name its sender gave (untrusted text)."""

    chat_id: str
    messages: int
    last_at: float
    name: str


class Inbox:
    """The ``inbox`` and ``refusals`` tables."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

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

    def finish(self, platform: str, chat_id: str, message_id: str, status: str,
               route: str | None) -> None:
        """Close a message: answered, failed (visibly) or ignored."""
        self.conn.execute(
            "UPDATE inbox SET status = ?, route = ?, done_at = ?"
            " WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (status, route, time.time(), platform, chat_id, message_id))

    def finish_all(self, platform: str, chat_id: str, message_ids: list[str], status: str,
                   route: str | None) -> None:
        """Close the messages one reply answered, all at once: a crash leaves all or none."""
        with transaction(self.conn):
            for message_id in message_ids:
                self.finish(platform, chat_id, message_id, status, route)

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

    def failures(self, limit: int = 20) -> list[Failure]:
        """The most recent messages marked failed for good, newest first."""
        rows = self.conn.execute(
            "SELECT platform, chat_id, message_id, error, done_at FROM inbox"
            " WHERE status = 'failed' AND error IS NOT NULL ORDER BY done_at DESC LIMIT ?",
            (limit,)).fetchall()
        return [Failure("message", str(platform), str(chat), str(item), str(error), float(at))
                for platform, chat, item, error, at in rows]

    def refuse_once(self, platform: str, chat_id: str) -> bool:
        """True the first time an unknown user is seen in a chat; False ever after."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO refusals (platform, chat_id, refused_at) VALUES (?, ?, ?)",
            (platform, chat_id, time.time()))
        return cur.rowcount == 1

    def prune(self, before: datetime, now: datetime | None = None) -> dict[str, int]:
        """Forget the messages closed before ``before``: the payload goes at once, the key
        (platform, chat, message id) only once its platform can no longer deliver it again
        (``REDELIVERY``), so a late re-delivery is still known and not answered twice. An
        open message is never touched. The rows emptied and removed."""
        cutoff = before.timestamp()
        now_s = (now or datetime.now(UTC)).timestamp()
        with transaction(self.conn):
            emptied = self.conn.execute(
                "UPDATE inbox SET payload = '{}' WHERE status != 'received' AND done_at < ?"
                " AND payload != '{}'", (cutoff,)).rowcount
            removed = 0
            for platform in self._platforms():
                horizon = min(cutoff, now_s - REDELIVERY.get(platform, REDELIVERY_ELSE))
                removed += self.conn.execute(  # along inbox_by_done (+: not the key's)
                    "DELETE FROM inbox WHERE +platform = ? AND status != 'received'"
                    " AND done_at < ? AND received_at < ?",
                    (platform, cutoff, horizon)).rowcount
        return {"inbox_payloads": emptied, "inbox": removed}

    def _platforms(self) -> list[str]:
        return [str(row[0]) for row in self.conn.execute("SELECT DISTINCT platform FROM inbox")]

    def senders(self, platform: str, limit: int = 200) -> list[Sender]:
        """The chats that wrote on ``platform``, the latest first (``frontdesk people`` lists
        the email correspondents so). SQLite takes the bare name from the row of MAX."""
        rows = self.conn.execute(
            "SELECT chat_id, COUNT(*), MAX(received_at),"
            " json_extract(CASE WHEN json_valid(payload) THEN payload END, '$.user_name')"
            " FROM inbox WHERE platform = ? GROUP BY chat_id ORDER BY 3 DESC LIMIT ?",
            (platform, limit)).fetchall()
        return [Sender(str(chat), int(count), float(last), str(name or ""))
                for chat, count, last, name in rows]
