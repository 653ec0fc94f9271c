"""The stored allowlist that pairing builds: who asked, and whom the owner allowed or blocked.

One row per person per platform in the ``people`` table (this module is the only code with SQL
on it). A stranger's first message makes a row ``asked`` with the message kept, so the owner's
Allow answers it even after a restart; the owner's press makes it ``allowed`` or ``blocked``.
``shown_in`` / ``shown_at`` say which message first put the person before the owner (their own
prompt, or a summary of several held back by pairing's hourly limit), and when; a person asked
but not shown yet is held.
Settings' allowlists (``TELEGRAM_ALLOWED_USERS`` …) still count on their own; this table only
adds to them. ``frontdesk people`` lists it, ``frontdesk people remove ID`` deletes a row.

Usage::

    people = People(open_database(settings.database))  # bot.schema
    if people.ask("telegram", "66", "Ann", "ann", "hello there", message_json): ...prompt
    people.decide("telegram", "66", "allowed")      # True once: the first decision
    people.status("telegram", "66")                  # 'allowed'
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlitedb import Migration, transaction
from sqlitedb.database import Database

MIGRATIONS: list[Migration] = [
    ("people_001_create", """
        CREATE TABLE people (
            platform TEXT NOT NULL,
            user_id TEXT NOT NULL,
            status TEXT NOT NULL,            -- asked | allowed | blocked
            name TEXT NOT NULL DEFAULT '',
            username TEXT NOT NULL DEFAULT '',
            first_words TEXT NOT NULL DEFAULT '',
            message TEXT,                    -- the waiting message (JSON) until it is answered
            asked_at REAL NOT NULL,
            decided_at REAL,
            PRIMARY KEY (platform, user_id)
        );
    """),
    ("people_002_shown", """
        ALTER TABLE people ADD COLUMN shown_in TEXT;
        ALTER TABLE people ADD COLUMN shown_at REAL;
        UPDATE people SET shown_in = 'pairing:' || platform || ':' || user_id,
                          shown_at = asked_at;
        CREATE INDEX people_shown ON people (shown_at);
    """),
    # A person's time zone (as they gave it: an IANA name or UTC+02:00), by scope, so the
    # settings' allowlisted people, who have no row above, have one too.
    ("people_003_zones", """
        CREATE TABLE person_zones (
            scope TEXT PRIMARY KEY,          -- telegram:200
            zone TEXT,                       -- NULL: asked, not answered yet
            asked_at REAL,
            set_at REAL
        );
    """),
    # `frontdesk people` pages newest first (``People.page``): along this, not a sort of all.
    ("people_004_by_asked", "CREATE INDEX people_by_asked ON people (asked_at)"),
]


@dataclass(frozen=True)
class Person:
    """One row of the stored allowlist."""

    platform: str
    user_id: str
    status: str
    name: str
    username: str
    first_words: str
    asked_at: float
    decided_at: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = "platform, user_id, status, name, username, first_words, asked_at, decided_at"


class People:
    """The ``people`` table on one connection."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def status(self, platform: str, user_id: str) -> str | None:
        """'asked', 'allowed', 'blocked', or None for someone never seen."""
        row = self.conn.execute("SELECT status FROM people WHERE platform = ? AND user_id = ?",
                                (platform, user_id)).fetchone()
        return str(row[0]) if row else None

    def ask(self, platform: str, user_id: str, name: str, username: str, first_words: str,
            message: dict[str, Any]) -> bool:
        """Record a stranger's first message; False when they are known already (asked once)."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO people (platform, user_id, status, name, username,"
            " first_words, message, asked_at) VALUES (?, ?, 'asked', ?, ?, ?, ?, ?)",
            (platform, user_id, name, username, first_words, json.dumps(message), time.time()))
        return cur.rowcount == 1

    def decide(self, platform: str, user_id: str, status: str) -> bool:
        """The owner's answer to a person still asking; False when already decided (or unknown)."""
        assert status in {"allowed", "blocked"}, status
        cur = self.conn.execute(
            "UPDATE people SET status = ?, decided_at = ? WHERE platform = ? AND user_id = ?"
            " AND status = 'asked'", (status, time.time(), platform, user_id))
        return cur.rowcount == 1

    def waiting_message(self, platform: str, user_id: str) -> dict[str, Any] | None:
        """The message a person sent when they asked, until it is taken."""
        row = self.conn.execute(
            "SELECT message FROM people WHERE platform = ? AND user_id = ?",
            (platform, user_id)).fetchone()
        if not row or row[0] is None:
            return None
        data: dict[str, Any] = json.loads(row[0])
        return data

    def take_message(self, platform: str, user_id: str) -> None:
        """Forget the waiting message (it is in the inbox now, or will never be answered)."""
        self.conn.execute("UPDATE people SET message = NULL WHERE platform = ? AND user_id = ?",
                          (platform, user_id))

    # -- who was shown to the owner, and when (the hourly limit's record) ----------------
    def shown_in(self, platform: str, user_id: str) -> str | None:
        """The key of the message that first showed this person to the owner, if any."""
        row = self.conn.execute("SELECT shown_in FROM people WHERE platform = ? AND user_id = ?",
                                (platform, user_id)).fetchone()
        return str(row[0]) if row and row[0] is not None else None

    def shown(self, people: Sequence[tuple[str, str]], key: str, at: float) -> None:
        """These people were put before the owner by the message ``key`` at ``at``."""
        with transaction(self.conn):
            self.conn.executemany(
                "UPDATE people SET shown_in = ?, shown_at = ? WHERE platform = ? AND user_id = ?",
                [(key, at, platform, user_id) for platform, user_id in people])

    def shown_times(self, since: float) -> list[float]:
        """When each message that showed someone after ``since`` left, oldest first."""
        rows = self.conn.execute(
            "SELECT MIN(shown_at) FROM people WHERE shown_at > ? GROUP BY shown_in ORDER BY 1",
            (since,)).fetchall()
        return [float(row[0]) for row in rows]

    def held(self) -> list[Person]:
        """People still asking whom no message has shown to the owner yet, oldest first."""
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM people WHERE status = 'asked' AND message IS NOT NULL"
            " AND shown_in IS NULL ORDER BY asked_at, rowid")
        return [Person(*row) for row in rows]

    def shown_by(self, key: str) -> list[Person]:
        """People still asking whom the message ``key`` showed, oldest first."""
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM people WHERE status = 'asked' AND message IS NOT NULL"
            " AND shown_in = ? ORDER BY asked_at, rowid", (key,))
        return [Person(*row) for row in rows]

    def all(self) -> list[Person]:
        """Everyone, newest first."""
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM people ORDER BY asked_at DESC")
        return [Person(*row) for row in rows]

    def page(self, limit: int, before: float | None = None) -> list[Person]:
        """Up to ``limit`` people, newest first, asked before ``before`` (the last one's
        ``asked_at`` of the page before; None: the first page), along ``people_by_asked``."""
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM people WHERE asked_at < ? ORDER BY asked_at DESC LIMIT ?",
            (float("inf") if before is None else before, limit))
        return [Person(*row) for row in rows]

    def zones_of(self, scopes: list[str]) -> dict[str, str]:
        """The known time zones of these scopes (``platform:user_id``)."""
        marks = ", ".join("?" * len(scopes))
        rows = self.conn.execute("SELECT scope, zone FROM person_zones WHERE zone IS NOT NULL"
                                 f" AND scope IN ({marks})", scopes)
        return {str(scope): str(zone) for scope, zone in rows}

    def zones_unpaired(self) -> dict[str, str]:
        """The time zones of people with no pairing row (allowed by the settings)."""
        rows = self.conn.execute(
            "SELECT scope, zone FROM person_zones WHERE zone IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM people WHERE platform = substr(scope, 1, instr(scope, ':') - 1)"
            " AND user_id = substr(scope, instr(scope, ':') + 1))")  # along the primary key
        return {str(scope): str(zone) for scope, zone in rows}

    def zone(self, scope: str) -> str | None:
        """The person's time zone as stored, None when unknown."""
        row = self.conn.execute("SELECT zone FROM person_zones WHERE scope = ?",
                                (scope,)).fetchone()
        return str(row[0]) if row and row[0] else None

    def set_zone(self, scope: str, zone: str) -> None:
        """Keep the person's time zone (``/timezone``, or "I'm in Tokyo")."""
        self.conn.execute(
            "INSERT INTO person_zones (scope, zone, set_at) VALUES (?, ?, ?) ON CONFLICT (scope)"
            " DO UPDATE SET zone = excluded.zone, set_at = excluded.set_at",
            (scope, zone, time.time()))

    def ask_zone_once(self, scope: str) -> bool:
        """True the first time only (the caller asks the person for their zone then)."""
        cur = self.conn.execute("INSERT OR IGNORE INTO person_zones (scope, asked_at)"
                                " VALUES (?, ?)", (scope, time.time()))
        return cur.rowcount == 1

    def zone_asked(self, scope: str) -> bool:
        """Whether the person was asked for their zone and has not given it."""
        row = self.conn.execute("SELECT zone, asked_at FROM person_zones WHERE scope = ?",
                                (scope,)).fetchone()
        return bool(row and row[0] is None and row[1] is not None)

    def zones(self) -> dict[str, str]:
        """Everyone's known time zone, by scope."""
        rows = self.conn.execute("SELECT scope, zone FROM person_zones WHERE zone IS NOT NULL")
        return {str(scope): str(zone) for scope, zone in rows}

    def remove(self, user_id: str, platform: str | None = None) -> int:
        """Delete a person (on every platform unless one is named); how many rows went."""
        if platform is None:
            cur = self.conn.execute("DELETE FROM people WHERE user_id = ?", (user_id,))
        else:
            cur = self.conn.execute("DELETE FROM people WHERE user_id = ? AND platform = ?",
                                    (user_id, platform))
        return cur.rowcount
