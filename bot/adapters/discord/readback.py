"""Reading back what Discord sent while the bot was away, from each channel's cursor.

Discord does not re-deliver what was sent while the bot was down, so at start (and after any
fresh session) each channel the bot has seen is read back from its cursor, and whatever is new
is taken once. A cursor passes a message only once it is in the inbox (or needs no answer),
and a live message moves it only in a channel already read back in this session, so a crash
before the read-back never skips what was sent earlier. The cursors are kept in the
database (``bot.delivery.cursors``), handed over as ``AdapterCursors``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.adapters.base import AdapterCursors

log = logging.getLogger(__name__)
CURSOR_PREFIX = "discord:channel:"  # + channel id -> every message up to this id is taken


class ReadBack:
    """The channel cursors, and which channels were read back in this session."""

    def __init__(self, cursors: AdapterCursors) -> None:
        self.cursors = cursors  # each channel's last message taken
        self.done: set[int] = set()  # channels read back since this session began

    def new_session(self) -> None:
        """A new session (READY, before its messages): every channel is read back anew."""
        self.done.clear()

    def passed(self, channel_id: int, message_id: int, *, reading_back: bool = False) -> None:
        """Move a channel's cursor past a taken message (never back: answers finish out of
        order); a live message in a channel not yet read back leaves it where it is."""
        name = CURSOR_PREFIX + str(channel_id)
        current = self.cursors.get(name)
        if current is None:  # a channel never seen: nothing before this message to read back
            self.done.add(channel_id)
        elif not reading_back and channel_id not in self.done:
            return
        if current is None or int(current) < message_id:
            self.cursors.set(name, str(message_id))

    async def catch_up(self, fetch_channel: Callable[[int], Awaitable[Any]],
                       take: Callable[[discord.Message], Awaitable[None]]) -> int:
        """Read every known channel from its cursor; ``take`` what is new (reading back)."""
        found = 0
        for name, last in self.cursors.with_prefix(CURSOR_PREFIX).items():
            channel_id = int(name.removeprefix(CURSOR_PREFIX))
            try:
                channel = await fetch_channel(channel_id)
                if not isinstance(channel, discord.abc.Messageable):
                    continue
                missed = [m async for m in channel.history(
                    after=discord.Object(int(last)), oldest_first=True, limit=None)]
                for message in missed:
                    found += 1
                    await take(message)
            except discord.HTTPException as exc:
                log.warning("could not read Discord channel %s: %s", channel_id, exc.status)
                continue
            except Exception:  # this channel waits for the next session; the others go on
                log.exception("reading back Discord channel %s failed", channel_id)
                continue
            self.done.add(channel_id)
        return found
