"""Busy time from the read-only calendar (``bot.calendar.ics``), for when no CalDAV copy gives it.

An adapter to the ``BusyTime`` protocol (``bot.calendar.writer``) over ``Calendar.events``:
cancelled events are free, an all-day event blocks its whole day(s) in the owner's zone,
everything else is busy for its span (the ``.ics`` reader keeps no TRANSP, so a transparent
event counts as busy here: the safe side). A calendar that cannot be read is a log line and
no busy time; the owner still approves every booking.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, time, timedelta, tzinfo

from bot.calendar.ics import Calendar, CalendarError
from bot.calendar.writer import Busy

log = logging.getLogger(__name__)


class IcsBusyTime:
    """The owner's busy stretches from the ``.ics`` calendar (none without one)."""

    def __init__(self, calendar: Calendar | None, zone: tzinfo) -> None:
        self.calendar, self.zone = calendar, zone

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        if self.calendar is None:
            return []
        try:
            found = self.calendar.events(start, end).events
        except CalendarError as exc:
            log.warning("calendar unavailable for meetings: %s", exc)
            return []
        stretches = []
        for event in found:
            if (event.status or "").upper() == "CANCELLED":
                continue
            low, high = self._moment(event.start), self._moment(event.end)
            if event.all_day and high <= low:
                high = low + timedelta(days=1)
            if low < high and low < end and start < high:
                stretches.append(Busy(low, high))
        return sorted(stretches)

    def _moment(self, value: datetime | date) -> datetime:
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=self.zone)
        return datetime.combine(value, time(), self.zone)
