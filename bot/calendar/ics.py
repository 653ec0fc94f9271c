"""Read the owner's calendar (.ics file or URL) and list the events in a window, in one zone.

Parsing is icalendar's, recurrence expansion (RRULE, RDATE, EXDATE, moved and cancelled
occurrences) is recurring-ical-events', and Google's ``X-WR-TIMEZONE`` is applied with
x-wr-timezone. What this module adds: a URL is fetched with httpx and cached on disk (the
cached copy is used, with a warning, when the fetch fails); every series is expanded on its
own so one broken series is skipped *and reported* instead of silently dropped or fatal; and
every time comes out in the window's zone (floating times are read in that zone, all-day
events stay dates).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx

from bot.calendar.rules import (
    RuleError,
    RuleTooDense,
    check_days_exist,
    min_gap_s,
    rule_parts,
)

if TYPE_CHECKING:  # the iCalendar libraries load with the first calendar read, not at start
    import icalendar

log = logging.getLogger("frontdesk.calendar")

BUSY = "busy"
MAX_ICS_BYTES = 20 * 1024 * 1024  # a calendar file larger than this is refused, unread
MAX_SERIES_OCCURRENCES = 200_000  # a series with more, from its start to the window's end, is
# skipped: expanding walks each one


class CalendarError(Exception):
    """The calendar cannot be read at all; the message is one line meant for the user."""


@dataclass(frozen=True)
class Event:
    """One occurrence: datetimes are aware and in the window's zone, all-day ones are dates."""

    summary: str
    start: datetime | date
    end: datetime | date
    all_day: bool
    status: str | None

    def to_json(self) -> dict[str, Any]:
        """The `frontdesk agenda --json` shape."""
        return {"summary": self.summary, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "all_day": self.all_day, "status": self.status}


@dataclass
class AgendaResult:
    """The events of a window, sorted by start then summary, and the series skipped."""

    events: list[Event] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def busy_only(self) -> AgendaResult:
        """Free/busy view for people other than the owner: times only, no titles."""
        busy = [replace(event, summary=BUSY) for event in self.events
                if (event.status or "").upper() != "CANCELLED"]
        return AgendaResult(events=busy, skipped=[])


def zone_named(name: str) -> tzinfo:
    """An IANA zone, or a Windows zone name ("W. Europe Standard Time") mapped to one."""
    if name != "UTC":  # the one name both know; the Windows table maps it to Etc/UTC
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            return ZoneInfo(name)
    from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

    try:
        return ZoneInfo(WINDOWS_TO_OLSON.get(name, name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CalendarError(f"unknown time zone {name!r}: use an IANA name like "
                            "'Europe/Berlin'") from exc


def machine_zone() -> tzinfo:
    """The machine's zone: $TZ, else /etc/localtime's IANA name, else its current offset."""
    for candidate in (os.environ.get("TZ", "").lstrip(":"), _localtime_name()):
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    local = datetime.now().astimezone().tzinfo
    assert local is not None
    return local


def _localtime_name() -> str:
    """The IANA name /etc/localtime links to, or ''."""
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return ""
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else ""


def redact(source: str) -> str:
    """A URL without path or query (private calendar URLs carry their secret there)."""
    parts = urlsplit(source)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.hostname or ''}/…"
    return source


class Calendar:
    """The owner's calendar: ``events(start, end)`` and ``next_hours(h)`` in one zone."""

    def __init__(self, source: str, *, tz: str | tzinfo | None, cache_dir: Path,
                 client: httpx.Client | None = None, max_age: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.zone = zone_named(tz) if isinstance(tz, str) else tz or machine_zone()
        self.cache_dir = cache_dir
        self._client = client
        self._max_age = max_age
        self._clock = clock
        self._loaded: tuple[float, object, icalendar.Calendar] | None = None

    # -- public surface ------------------------------------------------------------------

    def events(self, start: datetime, end: datetime) -> AgendaResult:
        """Every occurrence overlapping [start, end), zero-length ones included."""
        from recurring_ical_events.adapters.event import EventAdapter
        from recurring_ical_events.series import Series

        start, end = self._aware(start), self._aware(end)
        calendar = self._calendar()
        result = AgendaResult()
        for components in _series_components(calendar):
            try:
                for component in components:
                    check_series_rule(component, end)
                series = Series([EventAdapter(c) for c in components])
                occurrences = list(series.between(start, end))
                events = [self._event(o.as_component(False), o.start, o.end)
                          for o in occurrences]
            except Exception as exc:  # any error in one series must not hide the others
                result.skipped.append(_skip_message(components[0], exc))
                continue
            result.events.extend(events)
        result.events.sort(key=self._sort_key)
        return result

    def next_hours(self, hours: float, now: datetime | None = None) -> AgendaResult:
        """What is on from now for the next ``hours`` (for triage's urgency)."""
        start = self._aware(now) if now is not None else datetime.now(self.zone)
        return self.events(start, start + timedelta(hours=hours))

    def today(self, now: datetime | None = None) -> tuple[datetime, datetime]:
        """Midnight to midnight of today in the calendar's zone."""
        current = self._aware(now) if now is not None else datetime.now(self.zone)
        midnight = datetime.combine(current.date(), datetime.min.time(), self.zone)
        return midnight, datetime.combine(current.date() + timedelta(days=1),
                                          datetime.min.time(), self.zone)

    # -- conversion ----------------------------------------------------------------------

    def _aware(self, moment: datetime) -> datetime:
        """A window bound in the calendar's zone (naive bounds are read in it)."""
        if moment.tzinfo is None:
            return moment.replace(tzinfo=self.zone)
        return moment.astimezone(self.zone)

    def _event(self, component: icalendar.Event, start: date, end: date) -> Event:
        """Turn one expanded occurrence into an Event in the calendar's zone."""
        all_day = not isinstance(start, datetime)
        status = component.get("STATUS")
        return Event(summary=str(component.get("SUMMARY", "")),
                     start=self._moment(start, all_day), end=self._moment(end, all_day),
                     all_day=all_day, status=str(status) if status is not None else None)

    def _moment(self, value: date, all_day: bool) -> datetime | date:
        """A date for all-day events; else an aware datetime (floating read in the zone)."""
        if all_day:
            return value.date() if isinstance(value, datetime) else value
        if not isinstance(value, datetime):
            return datetime.combine(value, datetime.min.time(), self.zone)
        if value.tzinfo is None:
            return value.replace(tzinfo=self.zone)
        return value.astimezone(self.zone)

    def _sort_key(self, event: Event) -> tuple[datetime, str]:
        """Start (an all-day event starts at midnight in the zone), then summary."""
        start = event.start
        if not isinstance(start, datetime):
            start = datetime.combine(start, datetime.min.time(), self.zone)
        return start, event.summary

    # -- loading -------------------------------------------------------------------------

    def _calendar(self) -> icalendar.Calendar:
        """The parsed calendar, reloaded when the file changed or the URL copy is stale."""
        stamp = self._stamp()
        now = self._clock()
        if self._loaded is not None:
            loaded_at, loaded_stamp, calendar = self._loaded
            if stamp is not None and stamp == loaded_stamp:
                return calendar
            if stamp is None and now - loaded_at < self._max_age:
                return calendar
        calendar = parse(self._read(), redact(self.source))
        self._loaded = (now, stamp, calendar)
        return calendar

    def _is_url(self) -> bool:
        return urlsplit(self.source).scheme in ("http", "https")

    def _stamp(self) -> object:
        """A local file's (mtime, size), so an edited file is re-read; None for URLs."""
        if self._is_url():
            return None
        try:
            info = Path(self.source).expanduser().stat()
        except OSError:
            return ("missing",)
        return (info.st_mtime_ns, info.st_size)

    def _read(self) -> bytes:
        """The raw .ics bytes from the file, or from the URL with the on-disk cache."""
        if not self._is_url():
            path = Path(self.source).expanduser()
            try:
                if path.stat().st_size > MAX_ICS_BYTES:
                    raise CalendarError(too_large(self.source))
                return path.read_bytes()
            except OSError as exc:
                raise CalendarError(f"cannot read the calendar {self.source}: "
                                    f"{exc.strerror or exc}") from exc
        return self._fetch()

    def cache_path(self) -> Path:
        """Where the last good copy of this URL is kept."""
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:24]
        return self.cache_dir / f"calendar-{digest}.ics"

    def _fetch(self) -> bytes:
        """GET the URL; on failure fall back to the cached copy with a warning."""
        cached = self.cache_path()
        try:
            client = self._client or httpx.Client(timeout=15.0, follow_redirects=True)
            try:
                content = _download(client, self.source)
            finally:
                if self._client is None:
                    client.close()
        except httpx.HTTPError as exc:
            reason = _fetch_reason(exc)
            if cached.exists():
                log.warning("could not fetch the calendar %s (%s); using the cached copy",
                            redact(self.source), reason)
                return cached.read_bytes()
            raise CalendarError(f"cannot fetch the calendar {redact(self.source)} ({reason}) "
                                "and there is no cached copy yet") from exc
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".part")
        partial.write_bytes(content)
        partial.replace(cached)
        return content


def check_series_rule(component: icalendar.Event, end: datetime) -> None:
    """RuleError for a series rule that cannot be expanded within bounds: one whose days never
    exist, or with more than ``MAX_SERIES_OCCURRENCES`` occurrences from its start to ``end``
    (recurring-ical-events walks every one of them). Its parts only: nothing is expanded."""
    rule = component.get("RRULE")
    if rule is None:
        return
    text = rule.to_ical().decode() if hasattr(rule, "to_ical") else str(rule)
    try:
        check_days_exist(text)
        gap = min_gap_s(text)
    except RuleError:
        raise
    except (ValueError, TypeError):  # unreadable: the expansion names what is broken
        return
    start = component.get("DTSTART")
    first = getattr(start, "dt", None)
    if not isinstance(first, date):
        return
    if not isinstance(first, datetime):
        first = datetime.combine(first, datetime.min.time())
    span = (end.replace(tzinfo=None) - first.replace(tzinfo=None)).total_seconds()
    count = rule_parts(text).get("COUNT", "")
    occurrences = span / max(gap, 1.0)
    if count.isdigit():
        occurrences = min(occurrences, float(count))
    if occurrences > MAX_SERIES_OCCURRENCES:
        raise RuleTooDense(f"it repeats too often to read ({text})")


def parse(data: bytes, label: str) -> icalendar.Calendar:
    """Parse .ics bytes and normalise Google's X-WR-TIMEZONE; one-line error if impossible."""
    import icalendar
    import x_wr_timezone

    try:
        calendar = icalendar.Calendar.from_ical(data)
    except Exception as exc:  # icalendar raises assorted types on malformed input
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise CalendarError(f"cannot parse the calendar {label}: {detail}") from exc
    try:
        standard: icalendar.Calendar = x_wr_timezone.to_standard(calendar)
    except Exception as exc:  # a bad X-WR-TIMEZONE: keep the times as written
        log.warning("ignoring X-WR-TIMEZONE of %s: %s", label, exc)
        return calendar
    return standard


def _series_components(calendar: icalendar.Calendar) -> list[list[icalendar.Event]]:
    """VEVENTs grouped into series by UID (a missing UID is its own series), file order."""
    import icalendar

    groups: dict[str, list[icalendar.Event]] = defaultdict(list)
    for index, component in enumerate(calendar.walk("VEVENT")):
        assert isinstance(component, icalendar.Event)
        uid = component.get("UID")
        groups[str(uid) if uid is not None else f"\0no-uid-{index}"].append(component)
    return list(groups.values())


def _skip_message(component: icalendar.Event, exc: Exception) -> str:
    """One line naming the skipped series and why."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    return f"skipped broken series {_series_name(component)}: {detail}"


def _series_name(component: icalendar.Event) -> str:
    """The summary, else the UID, else the raw start: something the owner can find."""
    summary = str(component.get("SUMMARY", ""))
    if summary:
        return repr(summary)
    if component.get("UID") is not None:
        return f"(untitled, UID {component['UID']})"
    try:
        value = component["DTSTART"].to_ical()
        raw = value.decode() if isinstance(value, bytes) else str(value)
    except Exception:  # the start itself may be the broken part
        raw = "?"
    return f"(untitled, starting {raw})"


def too_large(source: str) -> str:
    """The one line for a calendar past ``MAX_ICS_BYTES``."""
    return (f"the calendar {redact(source)} is larger than {MAX_ICS_BYTES // (1024 * 1024)} "
            "MB; I don't read it (point FRONTDESK_CALENDAR at a smaller one)")


def _download(client: httpx.Client, url: str) -> bytes:
    """The body of GET ``url``, read as it arrives and refused past ``MAX_ICS_BYTES``, whatever
    size the server declared (or did not)."""
    with client.stream("GET", url) as response:
        response.raise_for_status()
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_ICS_BYTES:
                raise CalendarError(too_large(url))
            chunks.append(chunk)
    return b"".join(chunks)


def _fetch_reason(exc: httpx.HTTPError) -> str:
    """Why a fetch failed, without the URL (it may hold a secret)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return type(exc).__name__
