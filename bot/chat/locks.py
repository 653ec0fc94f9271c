"""One lock per chat: a chat's messages, button presses and briefings are handled one at a time.

The gateway and the owner's decisions (``bot.chat.decisions``) share one ``ChatLocks``, so a
press and a message of the same chat never run at once, while other chats go on.
"""

from __future__ import annotations

import asyncio


class ChatLocks:
    """An ``asyncio.Lock`` per (platform, chat), made on first use."""

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def of(self, platform: str, chat_id: str) -> asyncio.Lock:
        """The lock of this chat."""
        return self._locks.setdefault((platform, chat_id), asyncio.Lock())
