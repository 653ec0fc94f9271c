"""Reaching a Discord channel: the channel a chat id names, and retrying what discord.py gave up.

discord.py waits out rate limits (429) itself; ``with_retries`` tries again, with growing
pauses, after a server error (5xx) or a network failure, and never after a refusal that
retrying cannot change (403, 404, another 4xx).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp
import discord

from bot.adapters.discord.pacing import DiscordTuning

log = logging.getLogger(__name__)
T = TypeVar("T")


async def messageable(client: discord.Client, chat_id: str) -> discord.abc.Messageable:
    """The channel of a chat id; ``user:<id>`` (the notifier's fallback) is a DM to that user."""
    if chat_id.startswith("user:"):
        return await client.create_dm(discord.Object(int(chat_id.removeprefix("user:"))))
    channel = client.get_channel(int(chat_id))
    if isinstance(channel, discord.abc.Messageable):
        return channel
    return client.get_partial_messageable(int(chat_id))


async def with_retries(call: Callable[[], Awaitable[T]], tuning: DiscordTuning) -> T:
    """discord.py waits out 429s itself; this retries what it gave up on (5xx, network)."""
    for attempt in range(1, tuning.send_attempts + 1):
        try:
            return await call()
        except (discord.Forbidden, discord.NotFound):
            raise  # permanent: retrying cannot help
        except discord.HTTPException as exc:
            if (exc.status < 500 and exc.status != 429) or attempt == tuning.send_attempts:
                raise
            log.warning("Discord said %s; trying again", exc.status)
        except (TimeoutError, OSError, aiohttp.ClientConnectionError):
            if attempt == tuning.send_attempts:
                raise
            log.warning("Discord unreachable; trying again")
        await asyncio.sleep(tuning.retry_base_s * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
