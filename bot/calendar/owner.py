"""The owner's day as the workflows read it: their zone, today's date, a day's events, and the
agenda a message's run starts with (free/busy for anyone but the owner).

Each works without a calendar too (the zone is then FRONTDESK_TIMEZONE's or the machine's,
and there are no events); a calendar that cannot be read is a log line, never a failed run.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from bot.calendar.agenda import read_agenda
from bot.calendar.ics import Calendar, CalendarError, machine_zone, zone_named

log = logging.getLogger(__name__)


class OwnerCalendar:
    """The owner's calendar (or none) and zone, as plain functions for the workflows."""

    def __init__(self, calendar: Calendar | None, timezone: str | None) -> None:
        self.calendar = calendar
        self.timezone = timezone  # FRONTDESK_TIMEZONE, used without a calendar

    def zone(self) -> tzinfo:
        """The owner's zone: the calendar's, else FRONTDESK_TIMEZONE, else the machine's."""
        if self.calendar is not None:
            return self.calendar.zone
        return zone_named(self.timezone) if self.timezone else machine_zone()

    def today(self) -> str:
        """Today's ISO date in the owner's zone."""
        return datetime.now(self.zone()).date().isoformat()

    def context(self, sender: dict[str, Any]) -> str:
        """Today's events for the owner, free/busy for anyone else; '' without a calendar."""
        if self.calendar is None:
            return ""
        try:
            return read_agenda(self.calendar, 0, bool(sender["is_owner"]))
        except CalendarError as exc:
            log.warning("calendar unavailable: %s", exc)
            return ""

    def agenda_for(self, day: str) -> list[dict[str, Any]]:
        """The owner's events on ``day`` (ISO date) for the briefing; [] without a calendar."""
        if self.calendar is None:
            return []
        start = datetime.combine(date.fromisoformat(day), datetime.min.time(), self.zone())
        try:
            found = self.calendar.events(start, start + timedelta(days=1))
        except CalendarError as exc:
            log.warning("calendar unavailable for the briefing: %s", exc)
            return []
        return [event.to_json() for event in found.events]
