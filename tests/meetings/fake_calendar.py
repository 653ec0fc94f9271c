"""A calendar of our own implementing ``CalendarWriter``, kept in a folder so that it outlives a
killed process: one file per event (created with O_EXCL, as ``If-None-Match: *`` does), a
``down`` switch file (every call raises ``CalendarUnavailable``), and a log of each call.

``take(start, end)`` puts another person's event on it (the slot is "taken meanwhile").
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from pathlib import Path

from bot.calendar.writer import Busy, CalendarUnavailable


class FolderCalendar:
    """Events as files in ``folder``; ``calls.log`` records every call, one line each."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "events").mkdir(parents=True, exist_ok=True)

    # -- the test's side -------------------------------------------------------------------
    def set_down(self, down: bool) -> None:
        flag = self.folder / "down"
        flag.touch() if down else flag.unlink(missing_ok=True)

    def take(self, start: datetime, end: datetime, uid: str = "someone-else") -> None:
        self._write(uid, start, end, b"")

    def events(self) -> list[dict[str, str]]:
        return [json.loads(p.read_text()) for p in sorted((self.folder / "events").iterdir())]

    def ours(self) -> list[dict[str, str]]:
        return [e for e in self.events() if e["uid"].startswith("frontdesk-meeting-")]

    def calls(self) -> list[str]:
        log = self.folder / "calls.log"
        return log.read_text().split() if log.exists() else []

    # -- CalendarWriter --------------------------------------------------------------------
    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        found = [Busy(datetime.fromisoformat(e["start"]), datetime.fromisoformat(e["end"]))
                 for e in self.events()]
        return sorted(b for b in found if b.start < end and start < b.end)

    async def busy_now(self, start: datetime, end: datetime) -> list[Busy]:
        self._call("busy_now")
        return self.busy(start, end)

    async def create(self, uid: str, ics: bytes) -> bool:
        self._call("create")
        from icalendar import Calendar

        event = Calendar.from_ical(ics).walk("VEVENT")[0]
        assert str(event["UID"]) == uid
        return self._write(uid, event.decoded("DTSTART"), event.decoded("DTEND"), ics)

    async def exists(self, uid: str) -> bool:
        self._call("exists")
        return self._path(uid).exists()

    async def update(self, uid: str, ics: bytes) -> bool:
        self._call("update")
        from icalendar import Calendar

        if not self._path(uid).exists():
            return False
        event = Calendar.from_ical(ics).walk("VEVENT")[0]
        self._path(uid).unlink()
        return self._write(uid, event.decoded("DTSTART"), event.decoded("DTEND"), ics)

    async def cancel(self, uid: str) -> bool:
        self._call("cancel")
        try:
            self._path(uid).unlink()
        except FileNotFoundError:
            return False
        return True

    # -- inside ----------------------------------------------------------------------------
    def _call(self, name: str) -> None:
        with open(self.folder / "calls.log", "a", encoding="utf-8") as log:
            log.write(name + "\n")
        if (self.folder / "down").exists():
            raise CalendarUnavailable("the test calendar is down")

    def _path(self, uid: str) -> Path:
        return self.folder / "events" / (hashlib.sha256(uid.encode()).hexdigest()[:16] + ".json")

    def _write(self, uid: str, start: datetime, end: datetime, ics: bytes) -> bool:
        record = json.dumps({"uid": uid, "start": start.isoformat(), "end": end.isoformat(),
                             "ics": ics.decode()})
        try:
            fd = os.open(self._path(uid), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as handle:
            handle.write(record)
            handle.flush()
            os.fsync(handle.fileno())
        return True
