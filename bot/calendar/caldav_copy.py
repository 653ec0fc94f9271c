"""The owner's CalDAV calendar as the bot reads it: a local copy, kept fresh in the background.

Reading (the agenda, the triage's ``check_calendar``, busy time) only ever touches the copy in
memory, so a message never waits on the network. ``keep_fresh`` (a task of ``frontdesk run``)
refreshes it every ``REFRESH_S``; a refresh that fails keeps the last copy, and the server
going down or coming back is one log line each, not one per attempt. The copy is also kept on
disk (``FRONTDESK_HOME/cache``), so a restart, ``frontdesk chat`` or a server down at start
still read the last one. ``MergedEvents`` adds the read-only .ics (FRONTDESK_CALENDAR) and is
the ``CalendarWriter`` the meetings book through: its writes go to the server in a worker
thread and the copy is refreshed after each.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.calendar.caldav import CalDavServer
from bot.calendar.events import AgendaResult, EventSource, busy_stretches, expand, merged
from bot.calendar.ics import CalendarError, parse
from bot.calendar.writer import Busy, CalendarUnavailable

if TYPE_CHECKING:
    import icalendar

log = logging.getLogger("frontdesk.calendar")

REFRESH_S = 60.0  # how often the copy is refreshed from the server
MEMO_WINDOWS = 16  # windows remembered per copy (today's, asked by every message, above all)


@dataclass(frozen=True)
class Copy:
    """One version of the calendar: every event and zone of every object, and when read."""

    calendar: icalendar.Calendar
    synced_at: datetime
    generation: int


class CalDavCalendar(EventSource):
    """The CalDAV calendar's local copy: ``events`` reads it, ``refresh_now`` renews it."""

    def __init__(self, server: CalDavServer, *, zone: tzinfo, cache_dir: Path) -> None:
        self.server = server
        self.zone = zone
        self.cache_dir = cache_dir
        self._copy: Copy | None = None
        self._parsed: dict[str, tuple[str, list[Any]]] = {}  # URL -> (data, its components)
        self._problem = ""  # why the last refresh failed; '' after one that worked
        self._down_since: datetime | None = None
        self._disk_read = False
        self._memo: dict[tuple[int, datetime, datetime], AgendaResult] = {}
        self._refreshing = threading.Lock()  # one refresh at a time: the loop, a write's

    # -- reading the copy (never the network) --------------------------------------------

    def events(self, start: datetime, end: datetime) -> AgendaResult:
        """Every occurrence overlapping [start, end), from the copy; CalendarError when there
        is no copy at all (never read, nothing on disk)."""
        copy = self.current()
        if copy is None:
            raise CalendarError(f"calendar unavailable: {self._problem or 'not read yet'}")
        key = (copy.generation, self.aware(start), self.aware(end))
        found = self._memo.get(key)
        if found is None:
            found = expand(copy.calendar, key[1], key[2], self.zone)
            if len(self._memo) >= MEMO_WINDOWS:
                self._memo.clear()
            self._memo[key] = found
        return AgendaResult(list(found.events), list(found.skipped))  # the caller's to keep

    def unavailable(self) -> str:
        """'' while the server answers; else 'calendar unavailable …' and how old the copy is."""
        copy = self._copy
        if not self._problem and copy is not None:
            return ""
        since = f" since {self._down_since.astimezone(self.zone):%H:%M}" if self._down_since \
            else ""
        shown = (f"; showing the copy from {copy.synced_at.astimezone(self.zone):%a %d %b %H:%M}"
                 if copy is not None else "")
        return f"calendar unavailable{since}{shown}"

    def current(self) -> Copy | None:
        """The copy in memory, else the one on disk (read once), else None."""
        if self._copy is None and not self._disk_read:
            self._disk_read = True
            self._load_disk()
        return self._copy

    # -- refreshing ----------------------------------------------------------------------

    def refresh_now(self) -> None:
        """Fetch what changed and install it (blocks: a worker thread's job). Raises
        CalendarUnavailable when the server cannot be read; the last copy is kept."""
        with self._refreshing:
            try:
                changes = self.server.fetch()
            except CalendarUnavailable as exc:
                self._failed(str(exc))
                raise
            synced_at = datetime.now(UTC)
            if changes.objects != {url: data for url, (data, _) in self._parsed.items()}:
                self._save_disk(changes.objects, synced_at)  # first: the copy shown is kept
            generation = self._copy.generation if self._copy is not None else 0
            self._install(changes.objects, synced_at)
            if self._copy is not None and self._copy.generation != generation:
                self.events(*self.today())  # expanded here, so the next message need not
            if self._problem:
                log.warning("calendar available again: %s", self.server.config.label())
            self._problem, self._down_since = "", None

    async def refresh(self) -> bool:
        """``refresh_now`` in a worker thread; whether it worked."""
        try:
            await asyncio.to_thread(self.refresh_now)
        except CalendarUnavailable:
            return False
        return True

    async def keep_fresh(self, every_s: float = REFRESH_S) -> None:
        """Forever: refresh, then wait ``every_s`` (``frontdesk run`` starts this)."""
        await asyncio.to_thread(self.current)  # the disk copy, read before the first fetch
        while True:
            try:
                await self.refresh()
            except Exception:  # a bug must not end the refreshes: logged once per kind
                self._failed("the refresh failed unexpectedly (see the log)", trace=True)
            await asyncio.sleep(every_s)

    def _failed(self, problem: str, trace: bool = False) -> None:
        """Remember why; log only when the state changes (down, or down for a new reason)."""
        if problem != self._problem:
            copy = self._copy
            kept = (f"; using the copy from {copy.synced_at.astimezone(self.zone):%H:%M}"
                    if copy is not None else "")
            log.warning("calendar unavailable: %s%s", problem, kept, exc_info=trace)
        self._problem = problem
        self._down_since = self._down_since or datetime.now(UTC)

    def _install(self, objects: dict[str, str], synced_at: datetime) -> None:
        """Make ``objects`` the copy, re-parsing only the objects whose data changed."""
        import icalendar

        changed = set(objects) != set(self._parsed)
        parsed: dict[str, tuple[str, list[Any]]] = {}
        for url, data in objects.items():
            known = self._parsed.get(url)
            if known is not None and known[0] == data:
                parsed[url] = known
                continue
            changed = True
            try:
                one = parse(data.encode("utf-8"), f"the CalDAV object {url.rsplit('/', 1)[-1]}")
            except CalendarError as exc:
                log.warning("%s", exc)  # an unreadable object is skipped, the rest read
                parsed[url] = (data, [])
                continue
            parsed[url] = (data, [c for c in one.subcomponents
                                  if c.name in ("VEVENT", "VTIMEZONE")])
        self._parsed = parsed
        if not changed and self._copy is not None:
            self._copy = Copy(self._copy.calendar, synced_at, self._copy.generation)
            return
        calendar = icalendar.Calendar()
        calendar.add("prodid", "-//Frontdesk//CalDAV copy//EN")
        calendar.add("version", "2.0")
        for _, components in parsed.values():
            for component in components:
                calendar.add_component(component)
        generation = self._copy.generation + 1 if self._copy is not None else 1
        self._copy = Copy(calendar, synced_at, generation)
        self._memo = {}

    # -- the copy on disk ----------------------------------------------------------------

    def disk_path(self) -> Path:
        """Where the last good copy of this calendar is kept."""
        config = self.server.config
        digest = hashlib.sha256(f"{config.url}\0{config.calendar or ''}".encode()).hexdigest()
        return self.cache_dir / f"caldav-{digest[:24]}.json"

    def _save_disk(self, objects: dict[str, str], synced_at: datetime) -> None:
        """Write the copy (atomically); a disk that refuses is a warning, not a failure."""
        path = self.disk_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part")
            partial.write_text(json.dumps({"synced_at": synced_at.isoformat(),
                                           "objects": objects}), encoding="utf-8")
            partial.replace(path)
        except OSError as exc:
            log.warning("could not keep the calendar copy on disk (%s)", exc.strerror or exc)

    def _load_disk(self) -> None:
        """The copy saved by an earlier refresh, if any (a damaged one is ignored)."""
        try:
            saved = json.loads(self.disk_path().read_text(encoding="utf-8"))
            objects, synced_at = saved["objects"], datetime.fromisoformat(saved["synced_at"])
        except (OSError, ValueError, KeyError, TypeError):
            return
        with self._refreshing:
            if self._copy is None:  # a refresh may have been quicker
                self._install({str(k): str(v) for k, v in objects.items()}, synced_at)


class MergedEvents(EventSource):
    """The CalDAV copy and the read-only .ics as one calendar; the meetings' CalendarWriter."""

    def __init__(self, caldav: CalDavCalendar, ics: EventSource | None) -> None:
        self.caldav = caldav
        self.ics = ics
        self.zone = caldav.zone

    def sources(self) -> list[EventSource]:
        return [self.caldav] if self.ics is None else [self.caldav, self.ics]

    def events(self, start: datetime, end: datetime) -> AgendaResult:
        """Both sources' occurrences; one that cannot be read is left out (``unavailable``
        says so), both unreadable is a CalendarError."""
        results, problems = [], []
        for source in self.sources():
            try:
                results.append(source.events(start, end))
            except CalendarError as exc:
                problems.append(str(exc))
        if not results:
            raise CalendarError(problems[0])
        return merged(results, self.zone)

    def unavailable(self) -> str:
        return self.caldav.unavailable()

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        """Busy time over both sources; CalendarUnavailable when either cannot be read at all
        (slots offered from half a calendar could clash)."""
        events = []
        for source in self.sources():
            try:
                events += source.events(start, end).events
            except CalendarError as exc:
                raise CalendarUnavailable(str(exc)) from None
        return busy_stretches(events, self.zone)

    async def busy_now(self, start: datetime, end: datetime) -> list[Busy]:
        """Busy time after a refresh from the server (raises CalendarUnavailable if it fails)."""
        await asyncio.to_thread(self.caldav.refresh_now)
        return self.busy(start, end)

    async def create(self, uid: str, ics: bytes) -> bool:
        """Create the event once (``If-None-Match: *``); the copy then shows it."""
        created = await asyncio.to_thread(self.caldav.server.create, uid, ics)
        await self.caldav.refresh()
        return created

    async def exists(self, uid: str) -> bool:
        return await asyncio.to_thread(self.caldav.server.exists, uid)

    async def update(self, uid: str, ics: bytes) -> bool:
        """Move the event in place (its SEQUENCE raised); the copy then shows the new time."""
        updated = await asyncio.to_thread(self.caldav.server.update, uid, ics)
        await self.caldav.refresh()
        return updated

    async def cancel(self, uid: str) -> bool:
        """Delete the event; the copy then no longer shows it."""
        cancelled = await asyncio.to_thread(self.caldav.server.cancel, uid)
        await self.caldav.refresh()
        return cancelled
