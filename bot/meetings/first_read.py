"""An offer at start waits for the calendar's first read, so no guest is told "no free time"
for times that simply have not been fetched yet (a /meet owed from downtime is answered the
moment the bot starts, while the CalDAV copy is still being read)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from bot.calendar.writer import BusyTime, CalendarUnavailable


async def first_read(busy_time: BusyTime, now: Callable[[], datetime], wait_s: float,
                     poll: Callable[[float], Awaitable[None]]) -> bool:
    """True once ``busy_time`` can be read; False when it still cannot after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            busy_time.busy(now(), now() + timedelta(minutes=1))
            return True
        except CalendarUnavailable:
            if time.monotonic() >= deadline:
                return False
        await poll(0.1)
