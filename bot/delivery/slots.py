"""The timer of what waits for a slot: asleep until the next one opens, then a send, locked.

The hourly limited queue (``bot.delivery.hourly``, behind the owner notifier's urgent notices
and the pairing prompts about strangers) holds back what goes past its limit and sends it,
summed up, when a slot opens. ``SlotTimer`` is its timer: ``wake_at(due)`` keeps one task
asleep until the earliest time asked for, then runs ``send_due(now)`` under the owner's lock
and asks the owner to ``reschedule``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class SlotTimer:
    """One task asleep until the earliest due time asked for; a sooner time replaces it."""

    def __init__(self, *, clock: Callable[[], float],
                 sleep: Callable[[float], Awaitable[None]], lock: asyncio.Lock,
                 send_due: Callable[[float], Awaitable[None]], reschedule: Callable[[], None],
                 failure: str) -> None:
        """``failure``: the log line when a send fails (what was held stays held)."""
        self.clock = clock
        self.sleep = sleep
        self.lock = lock
        self.send_due = send_due
        self.reschedule = reschedule
        self.failure = failure
        self.task: asyncio.Task[None] | None = None
        self.due: float | None = None

    def wake_at(self, due: float | None) -> None:
        """Be awake at ``due`` (None: nothing waits), unless already due no later."""
        if due is None or (self.task is not None and not self.task.done()
                           and self.due is not None and self.due <= due):
            return
        if self.task is not None:
            self.task.cancel()
        self.due = due
        self.task = asyncio.get_running_loop().create_task(self._wake(due))

    async def _wake(self, due: float) -> None:
        await self.sleep(max(0.0, due - self.clock()))
        async with self.lock:
            self.task = self.due = None
            try:
                await self.send_due(self.clock())
            except Exception:  # what was held stays held: the next arrival tries again
                log.exception(self.failure)
            self.reschedule()
