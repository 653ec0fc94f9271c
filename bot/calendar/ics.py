"""Read the owner's calendar (.ics file or URL) and list the events in a window, in one zone.

Parsing is icalendar's, Google's ``X-WR-TIMEZONE`` is applied with x-wr-timezone, and the
expansion is ``bot.calendar.events``' (shared with the CalDAV copy). What this module adds: a
URL is fetched with httpx and cached on disk (the cached copy is used, with a warning, when the
fetch fails), and a local file is re-read when it changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx

from bot.calendar.events import (  # re-exported: the calendar's public names live here too
    BUSY,
    AgendaResult,
    Event,
    EventSource,
    check_series_rule,
    expand,
)

if TYPE_CHECKING:  # the iCalendar libraries load with the first calendar read, not at start
    import icalendar

log = logging.getLogger("frontdesk.calendar")

__all__ = ["BUSY", "AgendaResult", "Calendar", "CalendarError", "Event", "check_series_rule"]
MAX_ICS_BYTES = 20 * 1024 * 1024  # a calendar file larger than this is refused, unread


class CalendarError(Exception):
    """The calendar cannot be read at all; the message is one line meant for the user."""


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


class Calendar(EventSource):
    """The owner's .ics calendar: ``events(start, end)`` and ``next_hours(h)`` in one zone."""

    def __init__(self, source: str, *, tz: str | tzinfo | None, cache_dir: Path,
                 client: httpx.Client | None = None, max_age: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.zone = zone_named(tz) if isinstance(tz, str) else tz or machine_zone()
        self.cache_dir = cache_dir
        self._client = client
        self._max_age = max_age
        self._clock = clock
        self._loaded: icalendar.Calendar | None = None  # the calendar last parsed ...
        self._loaded_at = 0.0  # ... when, by the clock ...
        self._loaded_stamp: object = None  # ... and the file's stamp then
        self._last: tuple[icalendar.Calendar, tuple[datetime, datetime], AgendaResult] | None \
            = None

    def events(self, start: datetime, end: datetime) -> AgendaResult:
        """Every occurrence overlapping [start, end), zero-length ones included; the last
        window asked of this version of the file is remembered (today's, for every message)."""
        calendar, window = self._calendar(), (self.aware(start), self.aware(end))
        if self._last is None or self._last[0] is not calendar or self._last[1] != window:
            self._last = (calendar, window, expand(calendar, *window, self.zone))
        found = self._last[2]
        return AgendaResult(list(found.events), list(found.skipped))  # the caller's to keep

    # -- loading -------------------------------------------------------------------------

    def _calendar(self) -> icalendar.Calendar:
        """The parsed calendar, reloaded when the file changed or the URL copy is stale."""
        stamp = self._stamp()
        now = self._clock()
        if self._loaded is not None:
            if stamp is not None and stamp == self._loaded_stamp:
                return self._loaded
            if stamp is None and now - self._loaded_at < self._max_age:
                return self._loaded
        calendar = parse(self._read(), redact(self.source))
        self._loaded = calendar
        self._loaded_at = now
        self._loaded_stamp = stamp
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
