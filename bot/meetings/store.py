"""Meeting requests and bookings as durable records: the ``meetings`` table, its one owner.

A request is one row from the offer to its end: ``offered`` → ``held`` (a slot picked, held
until ``hold_until``) → ``booked`` (with the event's ``uid``), or ``declined``, ``expired``,
``cancelled``, ``conflict`` (the slot was taken before Book; the guest gets a new request).
A hold is taken in one write transaction that reads the other guests' holds and bookings
first, so of two guests picking the same slot one holds it and the other is told it is gone.

Usage::

    meetings = MeetingStore(open_database(settings.database))  # bot.schema
    meetings.offered("m-1", "m-1", guest)                   # a request, once per id
    why = meetings.hold("m-1", slot, until, check)           # None: held
    meetings.booked("m-1", uid)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.meetings.slots import Slot
from sqlitedb import Migration, transaction
from sqlitedb.database import Database

STATUSES = ("offered", "held", "booked", "declined", "expired", "cancelled", "conflict")
OPEN = ("offered", "held")

MIGRATIONS: list[Migration] = [
    ("meetings_001_create", """
        CREATE TABLE meetings (
            id TEXT PRIMARY KEY,           -- the request: its run's id (a new one per conflict)
            run_id TEXT NOT NULL,
            status TEXT NOT NULL,          -- offered | held | booked | declined | expired |
                                           -- cancelled | conflict
            guest TEXT NOT NULL,           -- 'owner' or '<platform>:<user id>'
            guest_name TEXT NOT NULL,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            topic TEXT NOT NULL,
            start TEXT, "end" TEXT,        -- ISO 8601 with the owner's offset
            start_ts REAL, end_ts REAL,    -- the same, UTC seconds
            hold_until REAL,
            uid TEXT,                      -- the event's UID once booked
            note TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX meetings_by_guest ON meetings (guest, status);
        CREATE INDEX meetings_by_start ON meetings (status, start_ts);
    """),
]
COLUMNS = ('id, run_id, status, guest, guest_name, platform, chat_id, topic, start, "end", '
           "hold_until, uid, note, updated_at")


@dataclass(frozen=True)
class Meeting:
    """One request or booking as stored."""

    id: str
    run_id: str
    status: str
    guest: str
    guest_name: str
    platform: str
    chat_id: str
    topic: str
    start: datetime | None
    end: datetime | None
    hold_until: float | None
    uid: str | None
    note: str
    updated_at: float = 0.0

    @property
    def slot(self) -> Slot | None:
        return Slot(self.start, self.end) if self.start and self.end else None

    def to_json(self) -> dict[str, Any]:
        """The ``frontdesk meetings --json`` shape."""
        return {"id": self.id, "status": self.status,
                "start": self.start.isoformat() if self.start else None,
                "end": self.end.isoformat() if self.end else None,
                "guest": self.guest_name, "guest_id": self.guest, "platform": self.platform,
                "topic": self.topic, "uid": self.uid}


def _row(row: Sequence[Any]) -> Meeting:
    start, end = (datetime.fromisoformat(v) if v else None for v in (row[8], row[9]))
    return Meeting(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], start, end,
                   row[10], row[11], row[12], row[13])


class MeetingStore:
    """The only code with SQL on the ``meetings`` table."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self.conn = db.writer
        self.clock = clock

    def offered(self, meeting_id: str, run_id: str, guest: dict[str, Any], topic: str) -> None:
        """Record a new request (once per id: a replay keeps the first)."""
        now = self.clock()
        self.conn.execute(
            "INSERT OR IGNORE INTO meetings (id, run_id, status, guest, guest_name, platform,"
            " chat_id, topic, created_at, updated_at) VALUES (?, ?, 'offered', ?, ?, ?, ?, ?,"
            " ?, ?)", (meeting_id, run_id, str(guest["scope"]), str(guest.get("name") or ""),
                       str(guest["platform"]), str(guest["chat_id"]), topic, now, now))

    def get(self, meeting_id: str) -> Meeting | None:
        row = self.conn.execute(f"SELECT {COLUMNS} FROM meetings WHERE id = ?",
                                (meeting_id,)).fetchone()
        return _row(row) if row else None

    def open_of(self, guest: str, offer_lasts: float) -> list[Meeting]:
        """A guest's open requests, oldest first: offered within ``offer_lasts`` seconds, or
        held and still in their hold (a request whose run ended without closing it, a
        cancelled or failed run, does not stay open for ever)."""
        now = self.clock()
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM meetings WHERE guest = ? AND ((status = 'offered' AND"
            " updated_at > ?) OR (status = 'held' AND hold_until > ?)) ORDER BY created_at",
            (guest, now - offer_lasts, now)).fetchall()
        return [_row(r) for r in rows]

    def taken(self, but: str | None = None, now: float | None = None) -> list[Slot]:
        """Frontdesk's meetings others hold (still in their hold) or booked, but ``but``."""
        now = self.clock() if now is None else now
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM meetings WHERE id != ? AND start IS NOT NULL AND"
            " (status = 'booked' OR (status = 'held' AND hold_until > ?))",
            (but or "", now)).fetchall()
        return [slot for r in rows if (slot := _row(r).slot) is not None]

    def hold(self, meeting_id: str, slot: Slot, until: float,
             check: Callable[[list[Slot]], str | None]) -> str | None:
        """Hold ``slot`` for the request if ``check`` (given the others' meetings) finds no
        rule broken; the reason otherwise. One write transaction: two holds never overlap."""
        with transaction(self.conn):
            if (why := check(self.taken(but=meeting_id))) is not None:
                return why
            self.conn.execute(
                'UPDATE meetings SET status = \'held\', start = ?, "end" = ?, start_ts = ?,'
                " end_ts = ?, hold_until = ?, updated_at = ? WHERE id = ? AND status IN"
                " ('offered', 'held')",
                (slot.start.isoformat(), slot.end.isoformat(), slot.start.timestamp(),
                 slot.end.timestamp(), until, self.clock(), meeting_id))
        return None

    def set_status(self, meeting_id: str, status: str, *, note: str = "",
                   uid: str | None = None, only_from: Sequence[str] = STATUSES) -> bool:
        """Move a request to ``status`` (from one of ``only_from``); False if it was not there."""
        assert status in STATUSES, status
        marks = ", ".join("?" * len(only_from))
        cursor = self.conn.execute(
            f"UPDATE meetings SET status = ?, note = ?, uid = COALESCE(?, uid), updated_at = ?"
            f" WHERE id = ? AND status IN ({marks})",
            (status, note, uid, self.clock(), meeting_id, *only_from))
        return cursor.rowcount == 1

    def listing(self, guest: str | None = None, *, upcoming_after: float | None = None,
                status: str | None = None, limit: int = 200) -> list[Meeting]:
        """Requests and bookings, soonest first: one guest's or all; only those ending after
        ``upcoming_after``; only one ``status``."""
        where: list[str] = ["1 = 1"]
        args: list[Any] = []
        if guest is not None:
            where.append("guest = ?")
            args.append(guest)
        if upcoming_after is not None:
            where.append("end_ts > ?")
            args.append(upcoming_after)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        rows = self.conn.execute(
            f"SELECT {COLUMNS} FROM meetings WHERE {' AND '.join(where)}"
            " ORDER BY COALESCE(start_ts, created_at), id LIMIT ?", (*args, limit)).fetchall()
        return [_row(r) for r in rows]

    def kept(self) -> tuple[set[str], set[str]]:
        """Every request's id, and every UID a request has (what the extras may point at)."""
        rows = self.conn.execute("SELECT id, uid FROM meetings").fetchall()
        return {str(id_) for id_, _ in rows}, {str(uid) for _, uid in rows if uid}

    def prune(self, before: datetime) -> dict[str, int]:
        """Remove the requests settled before ``before``: declined, expired or in conflict
        since then, and bookings that ended by then (one still ahead, or still offered or
        held, is never touched). The rows removed."""
        cutoff = before.timestamp()
        removed = self.conn.execute(
            "DELETE FROM meetings WHERE status NOT IN ('offered', 'held') AND updated_at < ?"
            " AND COALESCE(end_ts, 0) < ?", (cutoff, cutoff)).rowcount
        return {"meetings": removed}
