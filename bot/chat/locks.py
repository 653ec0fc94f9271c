"""One lock per chat: a chat's messages, button presses and briefings are handled one at a time.

The gateway and the owner's decisions (``bot.chat.decisions``) share one ``ChatLocks``, so a
press and a message of the same chat never run at once, while other chats go on. A chat's
lock lives only while someone holds or waits on it (``KeyedLocks``): months of chats leave
an empty table, not one lock per chat ever seen.
"""

from __future__ import annotations

import contextlib

from bot.config.bounded import KeyedLocks


class ChatLocks:
    """An ``asyncio.Lock`` per (platform, chat), made on first use, dropped when unused."""

    def __init__(self) -> None:
        self._locks: KeyedLocks[tuple[str, str]] = KeyedLocks()

    def of(self, platform: str, chat_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """The chat's lock, held for an ``async with`` block."""
        return self._locks.held((platform, chat_id))

    def __len__(self) -> int:
        """How many chats are held or waited on now."""
        return len(self._locks)
