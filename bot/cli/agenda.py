"""`frontdesk agenda`: print the events overlapping a window (default: today).

With FRONTDESK_CALDAV_URL set (and no ``--calendar``), the CalDAV calendar is read from the
server first (its last copy, with a warning, when the server cannot be reached), with
FRONTDESK_CALENDAR's .ics merged in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from dataclasses import replace
from datetime import date, datetime, timedelta, tzinfo

from bot.calendar.events import EventSource
from bot.calendar.ics import AgendaResult, Calendar, CalendarError, Event, machine_zone, zone_named
from bot.calendar.owner import OwnerCalendar
from bot.calendar.writer import CalendarUnavailable
from bot.config.settings import Settings
from bot.config.text import shown


class UsageError(Exception):
    """A bad argument; the message is one line for the user."""


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Read the calendar, print the window's events; broken series go to stderr."""
    _log_warnings_to_stderr()
    source = args.calendar or settings.calendar
    caldav = settings.caldav_url is not None and not args.calendar
    if not source and not caldav:
        _fail("no calendar configured: set FRONTDESK_CALENDAR (or FRONTDESK_CALDAV_URL) or "
              "pass --calendar PATH_OR_URL")
        return 2
    try:
        zone_name = args.tz or settings.timezone
        zone = zone_named(zone_name) if zone_name else machine_zone()
        start, end = window(args.start, args.end, zone)
    except (UsageError, CalendarError) as exc:
        _fail(str(exc))
        return 2
    ics = Calendar(source, tz=zone, cache_dir=settings.home / "cache") if source else None
    calendar: EventSource | None = ics
    if caldav:
        calendar = _caldav_calendar(settings, ics, zone)
    assert calendar is not None
    try:
        result = calendar.events(start, end)
    except CalendarError as exc:
        _fail(str(exc))
        return 1
    for line in result.skipped:
        _fail(line)
    print(render_json(result) if args.json else shown(render_text(result, start), "terminal"))
    return 0


def _caldav_calendar(settings: Settings, ics: Calendar | None, zone: tzinfo) -> EventSource:
    """The CalDAV calendar (refreshed from the server now) with the .ics merged in."""
    if ics is None:  # the zone asked for (--tz) rules, as for an .ics
        settings = replace(settings, timezone=getattr(zone, "key", None) or settings.timezone)
    owner = OwnerCalendar.build(settings, ics)
    assert owner.caldav is not None and owner.calendar is not None
    with contextlib.suppress(CalendarUnavailable):  # logged (a warning on stderr): the last
        owner.caldav.refresh_now()  # copy is read
    return owner.calendar


def window(start_text: str | None, end_text: str | None,
           zone: tzinfo) -> tuple[datetime, datetime]:
    """The window from --start/--end (naive times read in ``zone``); default today."""
    start = _parse(start_text, "--start", zone) if start_text else None
    end = _parse(end_text, "--end", zone) if end_text else None
    if start is None and end is None:
        today = datetime.now(zone).date()
        start = datetime.combine(today, datetime.min.time(), zone)
    if start is None:
        assert end is not None
        start = end - timedelta(days=1)
    if end is None:
        end = start + timedelta(days=1)
    if end < start:
        raise UsageError("--end is before --start")
    return start, end


def _parse(text: str, flag: str, zone: tzinfo) -> datetime:
    """An ISO 8601 date or datetime; a naive one is read in ``zone``."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"{flag} {text!r} is not an ISO 8601 date or time "
                         "(e.g. 2024-05-01 or 2024-05-01T09:00+02:00)") from exc
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


def render_json(result: AgendaResult) -> str:
    """The list, one object per event."""
    return json.dumps([event.to_json() for event in result.events], ensure_ascii=False)


def render_text(result: AgendaResult, start: datetime) -> str:
    """One line per event, for people."""
    if not result.events:
        return f"nothing on the calendar from {start:%Y-%m-%d %H:%M}"
    return "\n".join(_line(event) for event in result.events)


def _line(event: Event) -> str:
    """`2024-05-01 09:00–10:00  Title  [CANCELLED]` or `2024-05-01 all day  Title`."""
    status = f"  [{event.status}]" if event.status and event.status.upper() != "CONFIRMED" else ""
    if event.all_day or not isinstance(event.start, datetime):
        last = event.end - timedelta(days=1) if isinstance(event.end, date) else event.end
        span = f"{event.start:%Y-%m-%d}" if last <= event.start else \
            f"{event.start:%Y-%m-%d}–{last:%Y-%m-%d}"
        return f"{span} all day  {event.summary}{status}"
    end = event.end
    assert isinstance(end, datetime)
    until = f"{end:%H:%M}" if end.date() == event.start.date() else f"{end:%Y-%m-%d %H:%M}"
    return f"{event.start:%Y-%m-%d %H:%M}–{until}  {event.summary}{status}"


def _fail(message: str) -> None:
    """One line on stderr."""
    print(f"frontdesk agenda: {message}", file=sys.stderr)


def _log_warnings_to_stderr() -> None:
    """The calendar's warnings (e.g. 'using the cached copy') as one stderr line each."""
    logger = logging.getLogger("frontdesk.calendar")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("frontdesk agenda: warning: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
