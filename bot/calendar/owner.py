"""The owner's day as the workflows read it: their zone, today's date, a day's events, busy
time, and the agenda a message's run starts with (free/busy for anyone but the owner).

Each works without a calendar too (the zone is then FRONTDESK_TIMEZONE's or the machine's,
and there are no events); a calendar that cannot be read is a log line and "calendar
unavailable" in the agenda, never a failed run. With CalDAV configured, the calendar is the
CalDAV copy merged with the .ics (``bot.calendar.caldav_copy``), and ``writer`` is what the
meetings book through; the CalDAV modules (and the ``caldav`` client) load only then.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.calendar.agenda import read_agenda
from bot.calendar.events import EventSource
from bot.calendar.ics import Calendar, CalendarError, machine_zone, zone_named
from bot.calendar.writer import Busy, CalendarUnavailable, CalendarWriter

if TYPE_CHECKING:
    from bot.calendar.caldav_copy import CalDavCalendar
    from bot.config.settings import Settings

log = logging.getLogger(__name__)
UNAVAILABLE = "Calendar unavailable."


class OwnerCalendar:
    """The owner's calendar (or none) and zone, as plain functions for the workflows."""

    def __init__(self, calendar: EventSource | None, timezone: str | None,
                 writer: CalendarWriter | None = None,
                 caldav: CalDavCalendar | None = None) -> None:
        self.calendar = calendar
        self.timezone = timezone  # FRONTDESK_TIMEZONE, used without a calendar
        self.writer = writer  # the CalDAV calendar the meetings write to; None without one
        self.caldav = caldav  # its local copy, which ``keep_fresh`` keeps fresh

    @classmethod
    def build(cls, settings: Settings, ics: Calendar | None) -> OwnerCalendar:
        """The owner's calendar from the settings: the .ics alone, or (FRONTDESK_CALDAV_URL)
        the CalDAV copy with the .ics merged in."""
        if not settings.caldav_url:
            return cls(ics, settings.timezone)
        from bot.calendar.caldav import CalDavConfig, CalDavServer
        from bot.calendar.caldav_copy import CalDavCalendar, MergedEvents

        config = CalDavConfig.from_settings(settings)
        assert config is not None
        zone = ics.zone if ics is not None else (
            zone_named(settings.timezone) if settings.timezone else machine_zone())
        copy = CalDavCalendar(CalDavServer(config), zone=zone,
                              cache_dir=Path(settings.home) / "cache")
        merged = MergedEvents(copy, ics)
        return cls(merged, settings.timezone, writer=merged, caldav=copy)

    def zone(self) -> tzinfo:
        """The owner's zone: the calendar's, else FRONTDESK_TIMEZONE, else the machine's."""
        if self.calendar is not None:
            return self.calendar.zone
        return zone_named(self.timezone) if self.timezone else machine_zone()

    def today(self) -> str:
        """Today's ISO date in the owner's zone."""
        return datetime.now(self.zone()).date().isoformat()

    def context(self, sender: dict[str, Any]) -> str:
        """Today's events for the owner, free/busy for anyone else; '' without a calendar.
        Reads the local copy only: never waits on the network."""
        if self.calendar is None:
            return ""
        try:
            return read_agenda(self.calendar, 0, bool(sender["is_owner"]))
        except CalendarError as exc:
            log.warning("calendar unavailable: %s", exc)
            return UNAVAILABLE

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        """The owner's busy time overlapping [start, end) over every source (``BusyTime``):
        transparent, cancelled and zero-length events free, all-day ones block their days;
        [] without a calendar. CalendarUnavailable when a source has never been read."""
        if self.calendar is None:
            return []
        try:
            return self.calendar.busy(start, end)
        except CalendarError as exc:
            raise CalendarUnavailable(str(exc)) from None

    async def keep_fresh(self) -> None:
        """Keep the CalDAV copy fresh, forever (returns at once without CalDAV)."""
        if self.caldav is not None:
            await self.caldav.keep_fresh()

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
