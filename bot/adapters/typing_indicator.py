"""'typing…' in a chat while a message is answered, stopped the moment a reply goes out there.

Telegram and Discord both show the indicator for a few seconds after each trigger (5 s and
10 s), so it is triggered again while the answer runs. It stops when the answer's block ends or
as soon as a reply goes out in that chat (``stop``, called by the adapter's send), whichever
comes first; a trigger in flight then finishes (never cut off mid-request).

Usage::

    typing = Typing(every_s=4.5, after_s=0.3)
    async with typing.showing(chat_id, trigger):   # trigger: one platform request, errors kept
        ...                                        # to itself
    typing.stop(chat_id)                           # in send: a reply goes out
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable


class Typing:
    """The chats showing "typing…", each until its block ends or a reply goes out there."""

    def __init__(self, every_s: float, after_s: float = 0.0) -> None:
        """``every_s``: how often it is triggered again; ``after_s``: the first trigger waits
        this long (a quick answer needs none)."""
        self.every_s, self.after_s = every_s, after_s
        self._stops: dict[str, asyncio.Event] = {}  # chat -> set to stop its "typing…"

    @contextlib.asynccontextmanager
    async def showing(self, chat_id: str,
                      trigger: Callable[[], Awaitable[object]]) -> AsyncIterator[None]:
        """Show "typing…" in ``chat_id`` while the block runs."""
        stop = self._stops[chat_id] = asyncio.Event()

        async def keep_typing() -> None:
            if self.after_s > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.after_s)
            while not stop.is_set():
                await trigger()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.every_s)

        task = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            stop.set()
            if self._stops.get(chat_id) is stop:
                del self._stops[chat_id]
            await task

    def stop(self, chat_id: str) -> None:
        """A reply goes out in this chat (or its run waits for someone): no more "typing…"."""
        stop = self._stops.get(chat_id)
        if stop is not None:
            stop.set()
