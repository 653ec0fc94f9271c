"""The hourly limited queue: at most ``limit`` messages per scope in any window; the rest wait.

The owner notifier (urgent notices, one scope per person) and the pairing prompts (strangers,
one scope for all of them) both hold back what goes past their hourly limit and send it,
summed up, when a slot opens. ``HourlyQueue`` is that bookkeeping, written once: it counts
what was sent (``sent_times``, read from the owner's table), says when a scope has room
(``next_slot``), sends what waits for every scope whose slot is open (``send_due``), and keeps
a ``SlotTimer`` asleep until the earliest slot anything waits for (``schedule``). What is held,
and what a summary of it says, stay with the owner: it hands in ``held_scopes`` and
``send_held``.

Usage::

    queue = HourlyQueue(limit=5, window_s=3600.0, sent_times=log.sent_times,
                        held_scopes=log.held_scopes, send_held=send_summary,
                        failure="could not send the held messages")
    async with queue.lock:                 # one decision at a time: count, send, record
        await queue.send_due(queue.clock())
        ...
        queue.schedule()
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable

from bot.delivery.slots import SlotTimer


class HourlyQueue:
    """At most ``limit`` sends per scope in any ``window_s``; the rest leave when a slot opens."""

    def __init__(self, *, limit: int, window_s: float,
                 sent_times: Callable[[str, float], list[float]],
                 held_scopes: Callable[[], Iterable[str]],
                 send_held: Callable[[str, float], Awaitable[None]], failure: str,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        """``sent_times(scope, since)``: when each message to the scope after ``since`` left,
        oldest first; ``held_scopes()``: the scopes with something waiting;
        ``send_held(scope, now)``: send (and record as sent at ``now``) what waits for the
        scope; ``failure``: the log line when a timed send fails (what was held stays held)."""
        self.limit = limit
        self.window_s = window_s
        self.sent_times = sent_times
        self.held_scopes = held_scopes
        self.send_held = send_held
        self.clock = clock
        self.sleep = sleep
        self.lock = asyncio.Lock()  # one decision at a time: count, send, record
        self.timer = SlotTimer(clock=lambda: self.clock(), sleep=lambda s: self.sleep(s),
                               lock=self.lock, send_due=self.send_due,
                               reschedule=self.schedule, failure=failure)

    def next_slot(self, scope: str, now: float) -> float:
        """When a message to this scope may leave again: now, or when the oldest counted ages
        out."""
        times = self.sent_times(scope, now - self.window_s)
        if len(times) < self.limit:
            return now
        return times[len(times) - self.limit] + self.window_s

    def has_room(self, scope: str, now: float) -> bool:
        """Whether a message to this scope may leave now."""
        return self.next_slot(scope, now) <= now

    async def send_due(self, now: float) -> None:
        """Send what waits for every scope whose slot is open (called under the lock)."""
        for scope in self._waiting():
            if self.has_room(scope, now):
                await self.send_held(scope, now)

    def schedule(self) -> None:
        """Wake at the earliest slot anything held waits for (called under the lock)."""
        now = self.clock()
        self.timer.wake_at(min((self.next_slot(scope, now) for scope in self._waiting()),
                               default=None))

    def _waiting(self) -> list[str]:
        """The scopes with something held, each once, in the order they came."""
        return list(dict.fromkeys(self.held_scopes()))

    async def resume(self) -> None:
        """At start: send what waits whose slot opened while down, and set the timer."""
        async with self.lock:
            await self.send_due(self.clock())
            self.schedule()
