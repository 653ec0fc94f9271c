"""Reminders as durable records: the ``reminders_*`` table, occurrences in the owner's zone, limits.

A reminder belongs to one person (``scope``) and the chat it was set in. It has a next
occurrence (``due_at``, UTC seconds, and ``due_local``, the same moment as local ISO with its
offset); a recurring one keeps its iCalendar RRULE and the local wall time of its first
occurrence, and each next occurrence is computed by ``dateutil.rrule`` in *local wall time*
then placed in the zone, so a daily 08:30 stays 08:30 across DST changes. A rule is read
within bounds (``bot.calendar.rules``): one that can never fire, or fires more often than a
person's minimum gap, is refused when it is set, and each search for a next occurrence looks
a bounded number of occurrences and years ahead. ``Reminders`` is the
only code with SQL on the table. Firing is ``bot.reminders.timer``'s job; this module only says what
is due and moves a reminder past an occurrence it fired (compare-and-set on ``due_at``, so an
occurrence is advanced once).

Usage::

    reminders = Reminders(open_database(settings.database))  # bot.schema
    r = reminders.add("owner", "telegram", "42", "call Ann", when, zone=zone)
    for due in reminders.due(time.time()): ...        # fire it, then
    reminders.advance(due, time.time())               # the next occurrence, or done
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from bot.calendar.rules import (
    HORIZON_YEARS,
    RuleError,
    check_days_exist,
    check_gap,
    next_occurrence,
    read_rule,
)
from bot.config.text import clean
from bot.models.reminder_phrases import local_label
from sqlitedb import Migration, transaction
from sqlitedb.database import Database

log = logging.getLogger(__name__)
MAX_PENDING = 100  # per person
MAX_TEXT_CHARS = 1000
# a text to repeat, a prompt for the agent, an event's notice, the morning briefing, the
# daily backup
KINDS = ("text", "prompt", "calendar", "brief", "backup", "prune", "meeting")  # meeting: one booked
LIMITED_KINDS = ("text", "prompt")  # what a person sets; the bot's own do not count
# The shortest time between two occurrences of a person's recurring reminder: a guest's, the
# owner's, and the owner's prompt tasks (each one a run of the agent, with its cost).
MIN_GAP_GUEST_S = 15 * 60.0
MIN_GAP_OWNER_S = 60.0
MIN_GAP_PROMPT_S = 3600.0

MIGRATIONS: list[Migration] = [
    ("reminders_001_create", """
        CREATE TABLE reminders (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,             -- 'owner' or '<platform>:<user id>'
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,           -- '' : the owner's chat, found when it fires
            text TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'text',
            zone TEXT NOT NULL,
            first_local TEXT NOT NULL,       -- first occurrence, local wall time: RRULE anchor
            rrule TEXT,
            due_at REAL NOT NULL,            -- the next occurrence, UTC seconds
            due_local TEXT NOT NULL,         -- the same, local ISO with its offset
            status TEXT NOT NULL DEFAULT 'pending',  -- pending | done | cancelled
            source TEXT UNIQUE,              -- what set it (a tool call, a calendar event)
            fired INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL
        );
        CREATE INDEX reminders_pending ON reminders (status, due_at);
    """),
]
COLUMNS = ("id, scope, platform, chat_id, text, kind, zone, first_local, rrule, due_at, "
           "due_local, status, source, fired")


class ReminderError(ValueError):
    """A reminder that cannot be set; the message is one sentence for the person."""


@dataclass(frozen=True)
class Reminder:
    """One reminder and its next occurrence."""

    id: int
    scope: str
    platform: str
    chat_id: str
    text: str
    kind: str
    zone: str
    first_local: str
    rrule: str | None
    due_at: float
    due_local: str
    status: str
    source: str | None
    fired: int

    @property
    def due(self) -> datetime:
        """The next occurrence, aware, in the reminder's zone."""
        return datetime.fromisoformat(self.due_local).astimezone(ZoneInfo(self.zone))

    @property
    def occurrence_key(self) -> str:
        """The outbox key of this occurrence: the same after any restart."""
        return f"reminder:{self.id}:{self.due_local}"


def zone_name(zone: tzinfo) -> str:
    """The IANA name stored with a reminder (``ZoneInfo.key``; else the zone's own name)."""
    return getattr(zone, "key", None) or str(zone)


def check_rrule(rule: str, minimum_gap_s: float = 0.0) -> str:
    """The rule without an ``RRULE:`` prefix, if it can fire and no more often than
    ``minimum_gap_s``; a ReminderError saying what is wrong otherwise. Reads the rule's
    parts only: nothing is expanded yet."""
    try:
        cleaned = read_rule(rule)
        check_gap(cleaned, minimum_gap_s)
        check_days_exist(cleaned)
    except RuleError as exc:
        raise ReminderError(str(exc)) from exc
    return cleaned


def minimum_gap_s(scope: str, kind: str) -> float:
    """How close together a person's occurrences may be: the bot's own tasks are not limited."""
    if kind == "prompt":
        return MIN_GAP_PROMPT_S
    if kind not in LIMITED_KINDS:
        return 0.0
    return MIN_GAP_OWNER_S if scope == "owner" else MIN_GAP_GUEST_S


def occurrence_after(rule: str, first_local: datetime, zone: tzinfo,
                     after: datetime, inclusive: bool = False) -> datetime | None:
    """The rule's first occurrence after ``after`` (at it, when inclusive), aware in ``zone``;
    None when there is none within ``HORIZON_YEARS``. RuleError past ``MAX_LOOKED``.

    The rule runs over naive local wall times (8:30 stays 8:30 when the offset changes); the
    result is then placed in the zone. The search is bounded (``bot.calendar.rules``).
    """
    wall = after.astimezone(zone).replace(tzinfo=None)
    found = next_occurrence(rule, first_local.replace(tzinfo=None), wall, inclusive=inclusive)
    return None if found is None else found.replace(tzinfo=zone)


class Reminders:
    """The ``reminders`` table: add, list, cancel, what is due, advance past an occurrence."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self.conn = db.writer
        self.clock = clock
        self.listeners: list[Callable[[], object]] = []  # told when the next due time may move

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def add(self, scope: str, platform: str, chat_id: str, text: str, when: datetime, *,
            zone: tzinfo, rrule: str | None = None, kind: str = "text",
            source: str | None = None) -> Reminder:
        """A new pending reminder at ``when`` (aware), or the one ``source`` already set.

        A one-off time must be in the future; a recurring one starts at its first occurrence
        at or after ``when`` and now. ReminderError past the limit, or for a bad text or rule.
        """
        if source is not None and (known := self._by_source(source)) is not None:
            return known
        text = " ".join(clean(text).split())  # no controls or bidi overrides, ever shown
        if not text:
            raise ReminderError("What should I remind you of?")
        if len(text) > MAX_TEXT_CHARS:
            raise ReminderError(f"That reminder is too long; keep it under {MAX_TEXT_CHARS} "
                                "characters.")
        if kind not in KINDS:
            raise ReminderError(f"Unknown reminder kind {kind!r}.")
        now = datetime.fromtimestamp(self.clock(), zone)
        local = when.astimezone(zone)
        first = local
        if rrule is not None:
            rrule = check_rrule(rrule, minimum_gap_s(scope, kind))
            try:
                found = occurrence_after(rrule, local, zone, max(local, now),
                                         inclusive=local > now)  # never now itself
            except RuleError as exc:
                raise ReminderError(str(exc)) from exc
            if found is None:
                raise ReminderError(f"That recurrence has no occurrence in the next "
                                    f"{HORIZON_YEARS} years.")
            first = found
        if first <= now:
            raise ReminderError(f"{local_label(local)} has already passed. When should I "
                                "remind you?")
        if kind in LIMITED_KINDS and self.count_pending(scope) >= MAX_PENDING:
            raise ReminderError(f"You already have {MAX_PENDING} pending reminders, the most "
                                "I keep; cancel one first (/reminders cancel ID).")
        with transaction(self.conn):
            cursor = self.conn.execute(
                "INSERT OR IGNORE INTO reminders (scope, platform, chat_id, text, kind, zone,"
                " first_local, rrule, due_at, due_local, source, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope, platform, chat_id, text, kind, zone_name(zone),
                 local.replace(tzinfo=None).isoformat(), rrule, first.timestamp(),
                 first.isoformat(), source, self.clock()))
        found_row = self.get(cursor.lastrowid) if cursor.rowcount else None
        if found_row is None and source is not None:
            found_row = self._by_source(source)
        assert found_row is not None
        self._changed()
        return found_row

    def get(self, reminder_id: int | None) -> Reminder | None:
        """One reminder by id, whatever its status."""
        rows = self._select("WHERE id = ?", (reminder_id,))
        return rows[0] if rows else None

    def _by_source(self, source: str) -> Reminder | None:
        rows = self._select("WHERE source = ?", (source,))
        return rows[0] if rows else None

    def pending(self, platform: str | None = None, chat_id: str | None = None) -> list[Reminder]:
        """Pending reminders by next occurrence: all, or one chat's."""
        if platform is None:
            return self._select("WHERE status = 'pending' ORDER BY due_at, id", ())
        return self._select("WHERE status = 'pending' AND platform = ? AND chat_id = ?"
                            " ORDER BY due_at, id", (platform, chat_id or ""))

    def count_pending(self, scope: str) -> int:
        """How many pending reminders a person has."""
        row = self.conn.execute("SELECT COUNT(*) FROM reminders WHERE status = 'pending'"
                                " AND scope = ? AND kind IN ('text', 'prompt')",
                                (scope,)).fetchone()
        return int(row[0])

    def due(self, now: float) -> list[Reminder]:
        """Pending reminders whose next occurrence is at or before ``now``, oldest first."""
        return self._select("WHERE status = 'pending' AND due_at <= ? ORDER BY due_at, id",
                            (now,))

    def next_due_at(self) -> float | None:
        """When the earliest pending occurrence is due; None when nothing is pending."""
        row = self.conn.execute(
            "SELECT MIN(due_at) FROM reminders WHERE status = 'pending'").fetchone()
        return None if row[0] is None else float(row[0])

    def advance(self, reminder: Reminder, now: float) -> Reminder | None:
        """Past the occurrence just fired: the next one after now (missed ones are not owed
        again), or done. Only the occurrence still recorded moves; None when it ended."""
        zone = ZoneInfo(reminder.zone)
        after = max(datetime.fromtimestamp(now, zone), reminder.due)
        following = None
        if reminder.rrule:
            try:
                following = occurrence_after(reminder.rrule,
                                             datetime.fromisoformat(reminder.first_local),
                                             zone, after)
            except RuleError:  # set before the limits: it cannot be followed, so it ends
                log.warning("reminder %d ends: its rule has too many occurrences to follow",
                            reminder.id)
        if following is None:
            self.conn.execute("UPDATE reminders SET status = 'done', fired = fired + 1"
                              " WHERE id = ? AND due_at = ? AND status = 'pending'",
                              (reminder.id, reminder.due_at))
        else:
            self.conn.execute("UPDATE reminders SET due_at = ?, due_local = ?, fired = fired + 1"
                              " WHERE id = ? AND due_at = ? AND status = 'pending'",
                              (following.timestamp(), following.isoformat(), reminder.id,
                               reminder.due_at))
        self._changed()
        moved = self.get(reminder.id)
        return moved if moved is not None and moved.status == "pending" else None

    def cancel(self, reminder_id: int, scope: str, is_owner: bool) -> bool:
        """Cancel a pending reminder of ``scope`` (the bot's owner may cancel anyone's)."""
        owner_clause = "" if is_owner else " AND scope = ?"
        args: tuple[object, ...] = (reminder_id,) if is_owner else (reminder_id, scope)
        cursor = self.conn.execute(
            "UPDATE reminders SET status = 'cancelled' WHERE id = ? AND status = 'pending'"
            + owner_clause, args)
        self._changed()
        return cursor.rowcount == 1

    def cancel_sources(self, prefix: str, keep: str | None) -> int:
        """Cancel the pending reminders whose source starts with ``prefix``, but ``keep``:
        a setting's task (FRONTDESK_BRIEF_AT) replaced by its new value, or unset."""
        cursor = self.conn.execute(
            "UPDATE reminders SET status = 'cancelled' WHERE status = 'pending'"
            " AND substr(source, 1, ?) = ? AND source IS NOT ?", (len(prefix), prefix, keep))
        if cursor.rowcount:
            self._changed()
        return cursor.rowcount

    def pending_sources(self, prefix: str) -> list[Reminder]:
        """The pending reminders whose source starts with ``prefix`` (a meeting's), soonest
        first."""
        return self._select("WHERE status = 'pending' AND substr(source, 1, ?) = ?"
                            " ORDER BY due_at", (len(prefix), prefix))

    def sync_calendar(self, wanted: Mapping[str, tuple[datetime, str]], platform: str,
                      zone: tzinfo, now: float) -> tuple[int, int]:
        """Make the calendar's pending notices match ``wanted`` (source -> (when, text)).

        A new occurrence is added (each source once, ever: a notice sent is not sent again);
        a pending notice not wanted any more (its event moved or was cancelled) and not yet
        due is cancelled. Returns (added, cancelled).
        """
        added = cancelled = 0
        for source, (when, text) in wanted.items():
            if self._by_source(source) is None and when.timestamp() > now:
                self.add("owner", platform, "", text, when, zone=zone, kind="calendar",
                         source=source)
                added += 1
        for reminder in self._select("WHERE status = 'pending' AND kind = 'calendar'"
                                     " AND due_at > ?", (now,)):
            if reminder.source not in wanted and self.cancel(reminder.id, "owner", True):
                cancelled += 1
        return added, cancelled

    def _select(self, clause: str, args: tuple[object, ...]) -> list[Reminder]:
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM reminders {clause}", args).fetchall()
        return [Reminder(*row) for row in rows]

    def prune(self, before: datetime) -> dict[str, int]:
        """Remove the reminders done or cancelled whose last occurrence was before ``before``
        (one still ahead is never touched; the bot's own daily tasks stay, a cancelled one
        staying cancelled). The rows removed."""
        removed = self.conn.execute(
            "DELETE FROM reminders WHERE status IN ('done', 'cancelled') AND due_at < ?"
            " AND kind IN ('text', 'prompt', 'calendar')", (before.timestamp(),)).rowcount
        return {"reminders": removed}
