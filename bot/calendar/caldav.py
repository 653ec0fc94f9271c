"""Talk to the owner's CalDAV server: find the calendar, fetch what changed, write one event.

Every call here blocks on the network (the maintained ``caldav`` client, its synchronous API):
the bot runs them in worker threads (``bot.calendar.caldav_copy``), ``frontdesk doctor`` and
``frontdesk agenda`` directly. The synchronous client is used so one code path serves all
three, and its XML and iCalendar parsing stays off the event loop. The library is imported on
the first connection, so a start without CalDAV never loads it.

Changes are fetched with the library's sync-collection support (RFC 6578 sync tokens) where
the server offers it; where it does not, the library refetches the whole calendar. Every
request is bounded by ``timeout_s``. Errors come out as ``CalendarUnavailable`` with one line
naming the variable to fix, never the password (which is also scrubbed from any text the
server or the library put in an error).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from bot.calendar.writer import CalendarUnavailable
from bot.config.settings import Settings

TIMEOUT_S = 15  # one request to the server; a refresh or a write never waits longer per call
WRITE_PRIVILEGES = {"write", "write-content", "all", "bind"}


@dataclass(frozen=True)
class CalDavConfig:
    """Where the calendar is and who the bot is there (the password is kept out of repr)."""

    url: str
    calendar: str | None = None  # a display name (or the last path part) under ``url``
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> CalDavConfig | None:
        """The FRONTDESK_CALDAV_* settings, or None when CalDAV is not configured."""
        if not settings.caldav_url:
            return None
        return cls(settings.caldav_url, settings.caldav_calendar, settings.caldav_username,
                   settings.caldav_password)

    @property
    def host(self) -> str:
        """The server's host, the only part of the address put in messages."""
        return urlsplit(self.url).hostname or self.url

    def label(self) -> str:
        """How the calendar is named in messages: its name, or the server's host."""
        return f"{self.calendar!r} on {self.host}" if self.calendar else self.host


@dataclass
class Changes:
    """What a fetch brought: every object's data by URL (the whole calendar as it is now)."""

    objects: dict[str, str]
    incremental: bool  # True when the server's sync token was used


class CalDavServer:
    """One connection to the calendar; each method is one short exchange, serialised."""

    def __init__(self, config: CalDavConfig, timeout_s: int = TIMEOUT_S) -> None:
        self.config = config
        self.timeout_s = timeout_s
        self._lock = threading.Lock()  # the client's HTTP session is not shared across threads
        self._calendar: Any = None
        self._synced: Any = None  # the library's synchronisable collection, after a first fetch
        self._data: dict[str, str] = {}  # every object's iCalendar text by its URL

    # -- reading -------------------------------------------------------------------------

    def fetch(self) -> Changes:
        """The calendar's objects as they are now (only the changes travel where the server
        keeps sync tokens). CalendarUnavailable when the server cannot be read."""
        with self._lock, translated(self.config):
            calendar = self._connect()
            if self._synced is None:  # everything: the list, then the data in one REPORT
                synced = calendar.get_objects_by_sync_token(load_objects=False)
                unloaded = [obj.url for obj in synced.objects if not obj.is_loaded()]
                loaded = [obj for obj in synced.objects if obj.is_loaded()]
                loaded += calendar.multiget(unloaded) if unloaded else []
                self._data = {_key(obj): str(obj.data) for obj in loaded if obj.data}
                self._synced, incremental = synced, False
            else:  # what changed since the last sync token (the library refetches without)
                updated, deleted = self._synced.sync()
                for obj in deleted:
                    self._data.pop(_key(obj), None)
                self._data.update({_key(obj): str(obj.data) for obj in updated if obj.data})
                token = self._synced.sync_token
                incremental = not (isinstance(token, str) and token.startswith("fake-"))
        return Changes(dict(self._data), incremental)

    # -- writing (the meetings' CalendarWriter) ------------------------------------------

    def create(self, uid: str, ics: bytes) -> bool:
        """PUT the event with ``If-None-Match: *``; False when its UID is already there."""
        from caldav.lib import error

        with self._lock, translated(self.config):
            calendar = self._connect()
            try:
                calendar.add_event(ics.decode("utf-8"), no_overwrite=True, increase_seqno=False)
            except error.ConsistencyError:  # If-None-Match refused, or the UID found first
                return False
            return True

    def exists(self, uid: str) -> bool:
        """Whether an event with this UID is on the calendar."""
        from caldav.lib import error

        with self._lock, translated(self.config):
            try:
                self._connect().get_event_by_uid(uid)
            except error.NotFoundError:
                return False
            return True

    def update(self, uid: str, ics: bytes) -> bool:
        """Replace the event with this UID where it is (same resource, a reschedule);
        False when it is not there."""
        from caldav.lib import error

        with self._lock, translated(self.config):
            try:
                event = self._connect().get_event_by_uid(uid)
            except error.NotFoundError:
                return False
            event.data = ics.decode("utf-8")
            event.save(no_create=True, increase_seqno=False)
            return True

    def cancel(self, uid: str) -> bool:
        """Delete the event with this UID; False when it was already gone."""
        from caldav.lib import error

        with self._lock, translated(self.config):
            try:
                event = self._connect().get_event_by_uid(uid)
                event.delete()
            except error.NotFoundError:
                return False
            return True

    # -- the doctor's questions ----------------------------------------------------------

    def probe(self) -> tuple[str, bool]:
        """Reach the server, log in, find the calendar, read the rights on it: what was found
        and whether the bot may write there. CalendarUnavailable names what to fix."""
        from caldav.elements import dav

        with self._lock, translated(self.config):
            calendar = self._connect()
            props = calendar.get_properties([dav.CurrentUserPrivilegeSet(), dav.DisplayName()],
                                            parse_props=True)
        privileges = {str(p).rsplit("}", 1)[-1] for p in
                      props.get(dav.CurrentUserPrivilegeSet.tag) or []}
        name = props.get(dav.DisplayName.tag) or self.config.calendar or "the calendar"
        if not privileges:  # the server does not say: assume it, the first booking will tell
            return f"{name!s} found on {self.config.host}", True
        return f"{name!s} found on {self.config.host}", bool(privileges & WRITE_PRIVILEGES)

    # -- plumbing ------------------------------------------------------------------------

    def _connect(self) -> Any:
        """The calendar object, found once: the URL itself, or the one named under it."""
        if self._calendar is not None:
            return self._calendar
        from caldav.davclient import DAVClient
        from caldav.elements import cdav, dav

        client: Any = DAVClient(url=self.config.url, username=self.config.username,
                                       password=self.config.password, timeout=self.timeout_s)
        if self.config.calendar:
            self._calendar = self._named(client)
            return self._calendar
        calendar = client.calendar(url=self.config.url)
        kinds = calendar.get_properties([dav.ResourceType()], parse_props=True).get(
            dav.ResourceType.tag) or []
        if cdav.Calendar.tag not in kinds:
            raise CalendarUnavailable(
                f"FRONTDESK_CALDAV_URL is not a calendar on {self.config.host}: set "
                "FRONTDESK_CALDAV_CALENDAR to one of " + self._names(client)
                + ", or FRONTDESK_CALDAV_URL to the calendar's own address")
        self._calendar = calendar
        return calendar

    def _named(self, client: Any) -> Any:
        """The calendar under the principal whose display name (or URL's last part) is
        FRONTDESK_CALDAV_CALENDAR."""
        wanted = self.config.calendar or ""
        calendars = client.principal().get_calendars()
        for calendar in calendars:
            segment = str(calendar.url).rstrip("/").rsplit("/", 1)[-1]
            if wanted in (calendar.get_display_name(), segment):
                return calendar
        raise CalendarUnavailable(
            f"no calendar named {wanted!r} on {self.config.host}: set FRONTDESK_CALDAV_CALENDAR "
            "to one of " + _listed(calendars))

    def _names(self, client: Any) -> str:
        """The calendars the user has, for a message (or a hint when they cannot be listed)."""
        try:
            return _listed(client.principal().get_calendars())
        except Exception:  # listing is only a hint in an error message
            return "your calendars (the server did not list them)"


@contextmanager
def translated(config: CalDavConfig) -> Iterator[None]:
    """The client's errors as one-line ``CalendarUnavailable``s, the original not chained (its
    text may carry what the server said, or worse)."""
    try:
        yield
    except CalendarUnavailable:
        raise
    except Exception as exc:
        raise CalendarUnavailable(scrub(reason(exc, config), config)) from None


def reason(error: Exception, config: CalDavConfig) -> str:
    """One line saying why the server could not be used, and which variable to check."""
    from caldav.lib import error as dav_error

    status = getattr(error, "status", None) or ""
    if isinstance(error, dav_error.AuthorizationError):
        return (f"the CalDAV server {config.host} refused the login (HTTP {status or 401}): "
                "check FRONTDESK_CALDAV_USERNAME and FRONTDESK_CALDAV_PASSWORD (an app "
                "password for most providers)")
    if isinstance(error, dav_error.NotFoundError):
        return (f"the calendar was not found on {config.host}: check FRONTDESK_CALDAV_URL"
                + (" and FRONTDESK_CALDAV_CALENDAR" if config.calendar else ""))
    if isinstance(error, dav_error.DAVError):
        return (f"the CalDAV server {config.host} refused the request "
                f"({type(error).__name__}{f', HTTP {status}' if status else ''})")
    name = type(error).__name__
    if "timeout" in name.lower() or isinstance(error, TimeoutError):
        return (f"the CalDAV server {config.host} did not answer within {TIMEOUT_S} s: "
                "check FRONTDESK_CALDAV_URL and that the server is up")
    if isinstance(error, OSError):  # the HTTP libraries' connection errors are OSErrors
        return (f"cannot reach the CalDAV server {config.host} ({name}): check "
                "FRONTDESK_CALDAV_URL and that the server is up")
    return f"the CalDAV server {config.host} could not be read ({name})"


def scrub(text: str, config: CalDavConfig) -> str:
    """``text`` without the password, whatever put it there."""
    if config.password:
        text = text.replace(config.password, "***")
    return " ".join(text.split())


def _key(obj: Any) -> str:
    """An object's URL as one spelling (servers and the library quote differently)."""
    return unquote(str(obj.url.canonical()))


def _listed(calendars: list[Any]) -> str:
    """Display names, quoted, for a message."""
    names = []
    for calendar in calendars:
        try:
            names.append(repr(str(calendar.get_display_name() or calendar.url)))
        except Exception:  # one unreadable name must not hide the others
            continue
    return ", ".join(names) or "(none: the user has no calendar there)"

