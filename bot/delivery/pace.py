"""The pace of all of one bot's writes to a platform, every chat together.

A platform limits a bot overall as well as per chat (Telegram: about 30 messages a second
across all chats), so ten guests' answers streaming at once could reach it. ``WritePace``
keeps each platform's writes at most ``per_second`` in any second
(``FRONTDESK_WRITES_PER_SECOND``, 25 by default). The outbox's writes (a reply's parts, the
final edits of live messages, their deletions) ``take`` a slot and wait for it: a final
delivery is never dropped, only queued. A live update (``bot.delivery.live``) only
``try_take``s a slot free at once, none while a final write waits, and only while the
window is less than ``LIVE_SHARE`` full (the rest is kept for final writes, which then
rarely wait): live updates are what gives way; the next one shows the text so far, and the
final text replaces it anyway.

Slots are handed out in order, at most ``per_second`` within any ``WINDOW_S``; the window
is a little over a second so that the platform, which sees each write a moment later than
it was sent, never counts more than ``per_second`` in one of its seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

WINDOW_S = 1.1  # the second a platform counts in, and a margin for the way there
LIVE_SHARE = 0.8  # live updates use at most this share of a window: finals rarely wait


class WritePace:
    """Per platform: the times of the last writes given a slot (a final write waiting holds
    one in the future, so no live update takes a slot before it)."""

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.per_window = max(1, int(per_second))  # writes in any WINDOW_S
        self.live_cap = max(1, int(self.per_window * LIVE_SHARE))  # of them live updates
        self.clock = clock
        self.sleep = sleep
        self.slots: dict[str, deque[float]] = {}  # platform -> slot times, oldest first

    def _next_free(self, platform: str) -> float:
        """The earliest time a new slot may have on ``platform``."""
        slots = self.slots.setdefault(platform, deque())
        latest = slots[-1] if slots else float("-inf")
        window_full_until = slots[-self.per_window] + WINDOW_S \
            if len(slots) >= self.per_window else float("-inf")
        return max(latest, window_full_until)

    def _book(self, platform: str, at: float) -> None:
        slots = self.slots.setdefault(platform, deque())
        slots.append(at)
        while len(slots) > self.per_window:
            slots.popleft()

    def try_take(self, platform: str) -> bool:
        """A live update's slot: True when one is free now and no final write waits (it is
        then taken); False: this update is dropped."""
        now = self.clock()
        if self._next_free(platform) > now:  # the window is full, or a final write waits
            return False
        recent = sum(1 for at in self.slots[platform] if at > now - WINDOW_S)
        if recent >= self.live_cap:  # the rest of the window is kept for final writes
            return False
        self._book(platform, now)
        return True

    async def take(self, platform: str) -> None:
        """A final write's slot: the next free one, waited for (never refused)."""
        now = self.clock()
        at = max(now, self._next_free(platform))
        self._book(platform, at)  # booked before the wait: slots stay in order
        if at > now:
            await self.sleep(at - now)
