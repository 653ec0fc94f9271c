"""A booked event's extras, kept beside its meeting: the ``meeting_events`` and
``meeting_moves`` tables, their one owner.

Per event (its UID, which a reschedule keeps): the ``SEQUENCE`` the guest's invitation and the
calendar's copy carry (raised by one per move) and the video link, fixed once it is chosen.
Per request that moves a booking: which booking it moves (so Book updates that event instead
of making a second one, and a declined or expired move keeps the old time).

Usage::

    extras = MeetingExtras(open_database(settings.database))  # bot.schema
    link = extras.link_for(uid, lambda: new_link(uid))    # chosen once, then the same
    extras.moving("m-2", "m-1")                            # m-2 moves the booking m-1
    extras.bump(uid)                                       # SEQUENCE + 1, once per move
"""

from __future__ import annotations

from collections.abc import Callable

from sqlitedb import Migration, transaction
from sqlitedb.database import Database

MIGRATIONS: list[Migration] = [
    ("meeting_extras_001_create", """
        CREATE TABLE meeting_events (
            uid TEXT PRIMARY KEY,          -- the event's UID (kept by a reschedule)
            sequence INTEGER NOT NULL DEFAULT 0,
            link TEXT,                     -- the video link, NULL when FRONTDESK_MEETING_LINK=off
            moved_by TEXT                  -- the request whose move raised sequence last
        );
        CREATE TABLE meeting_moves (
            id TEXT PRIMARY KEY,           -- the request that offers new times
            moves TEXT NOT NULL,           -- the booked request it moves
            by_owner INTEGER NOT NULL DEFAULT 0  -- the owner picks (the guest is told apart)
        );
    """),
]


class MeetingExtras:
    """The only code with SQL on ``meeting_events`` and ``meeting_moves``."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def link_for(self, uid: str, make: Callable[[], str | None]) -> str | None:
        """The event's link: the one stored, else ``make()``'s, stored once (a replay after a
        crash finds the first)."""
        with transaction(self.conn):
            row = self.conn.execute("SELECT link FROM meeting_events WHERE uid = ?",
                                    (uid,)).fetchone()
            if row is not None and row[0] is not None:
                return str(row[0])
            link = make()
            self.conn.execute(
                "INSERT INTO meeting_events (uid, link) VALUES (?, ?) ON CONFLICT (uid) DO"
                " UPDATE SET link = COALESCE(link, excluded.link)", (uid, link))
        return link

    def link(self, uid: str | None) -> str | None:
        row = self.conn.execute("SELECT link FROM meeting_events WHERE uid = ?",
                                (uid or "",)).fetchone()
        return str(row[0]) if row and row[0] else None

    def sequence(self, uid: str | None) -> int:
        row = self.conn.execute("SELECT sequence FROM meeting_events WHERE uid = ?",
                                (uid or "",)).fetchone()
        return int(row[0]) if row else 0

    def bump(self, uid: str, by_request: str) -> int:
        """SEQUENCE + 1 for the move ``by_request``, once: a replay of that move keeps it."""
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO meeting_events (uid) VALUES (?)", (uid,))
            self.conn.execute(
                "UPDATE meeting_events SET sequence = sequence + 1, moved_by = ? WHERE uid = ?"
                " AND moved_by IS NOT ?", (by_request, uid, by_request))
        return self.sequence(uid)

    def moving(self, request_id: str, booked_id: str, by_owner: bool = False) -> None:
        """Record that ``request_id`` offers new times for the booking ``booked_id``."""
        self.conn.execute("INSERT OR IGNORE INTO meeting_moves (id, moves, by_owner) VALUES"
                          " (?, ?, ?)", (request_id, booked_id, int(by_owner)))

    def moved_by_owner(self, request_id: str) -> bool:
        row = self.conn.execute("SELECT by_owner FROM meeting_moves WHERE id = ?",
                                (request_id,)).fetchone()
        return bool(row and row[0])

    def moves(self, request_id: str) -> str | None:
        """The booking ``request_id`` moves, if it is a reschedule."""
        row = self.conn.execute("SELECT moves FROM meeting_moves WHERE id = ?",
                                (request_id,)).fetchone()
        return str(row[0]) if row else None

    def moves_of(self, booked_id: str) -> int:
        """How many reschedules of ``booked_id`` were started (each a run of its own)."""
        row = self.conn.execute("SELECT COUNT(*) FROM meeting_moves WHERE moves = ?",
                                (booked_id,)).fetchone()
        return int(row[0])

    def prune(self, meetings: set[str], uids: set[str]) -> dict[str, int]:
        """Forget the moves between requests of which none is kept in ``meetings`` and the
        events whose UID no kept request has (``uids``): their meetings were pruned. The rows
        removed."""
        moves = self.conn.execute("SELECT id, moves FROM meeting_moves").fetchall()
        gone_moves = [(id_,) for id_, booked in moves if id_ not in meetings
                      and booked not in meetings]
        events = self.conn.execute("SELECT uid FROM meeting_events").fetchall()
        gone_events = [(uid,) for (uid,) in events if uid not in uids]
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM meeting_moves WHERE id = ?", gone_moves)
            self.conn.executemany("DELETE FROM meeting_events WHERE uid = ?", gone_events)
        return {"meeting_moves": len(gone_moves), "meeting_events": len(gone_events)}
