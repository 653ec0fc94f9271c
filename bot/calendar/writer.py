"""What the meetings need of a calendar: busy time to plan with, and one event written at most
once per UID.

A protocol only: the CalDAV calendar (``bot.calendar.caldav``) implements it; the meetings
(``bot.meetings``) depend on it, never on the CalDAV client, so their tests can use a calendar
of their own and the client is loaded only when CalDAV is configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


class CalendarUnavailable(Exception):
    """The calendar server cannot be reached or refused the request; the message is one line,
    with no secret in it, meant for the log and the owner."""


@dataclass(frozen=True, order=True)
class Busy:
    """One stretch of busy time: aware datetimes, ``start < end``."""

    start: datetime
    end: datetime


class BusyTime(Protocol):
    """The owner's busy time in a window, from the local copy: never waits on the network."""

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        """Busy stretches overlapping [start, end), sorted; transparent and cancelled events
        (and cancelled occurrences) are free, an all-day opaque event blocks its whole day."""
        ...


class CalendarWriter(BusyTime, Protocol):
    """A calendar the meetings may write to (CalDAV); creation is idempotent by UID."""

    async def busy_now(self, start: datetime, end: datetime) -> list[Busy]:
        """Busy time read from the server as it is now (used to re-check a slot at Book);
        raises CalendarUnavailable when the server cannot be read."""
        ...

    async def create(self, uid: str, ics: bytes) -> bool:
        """Create the event ``ics`` (a VCALENDAR with one VEVENT whose UID is ``uid``) with
        ``If-None-Match: *``; True if created, False if an event with that UID already exists.
        Raises CalendarUnavailable when the server cannot be reached."""
        ...

    async def exists(self, uid: str) -> bool:
        """Whether an event with this UID is on the calendar (looked up before any retry)."""
        ...

    async def update(self, uid: str, ics: bytes) -> bool:
        """Replace the event with this UID in place (a reschedule: same UID, higher
        SEQUENCE); False when it is not there. Raises CalendarUnavailable."""
        ...

    async def cancel(self, uid: str) -> bool:
        """Delete the event with this UID; True if it was there, False if already gone."""
        ...
