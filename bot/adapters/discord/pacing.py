"""discord.py's pace, ours around it: its waits made shorter for tests (``DiscordTuning``),
and one trigger of the typing indicator (``typing_once``)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

TYPING_EVERY_S = 8.0  # Discord shows "typing…" for 10 s after each trigger


@dataclass(frozen=True)
class DiscordTuning:
    """discord.py's waits, made shorter for tests against a local fake.

    ``ready_timeout``: how long discord.py waits after the last GUILD_CREATE before on_ready
    (2 s on Discord). ``identify_delay``: the pause before every IDENTIFY but the first
    (Discord's identify rate limit, 5 s). ``send_attempts``/``retry_base_s``: our own retries
    of a send that discord.py gave up on (it already waits out rate limits by itself).
    """

    ready_timeout: float = 2.0
    identify_delay: float = 5.0
    send_attempts: int = 5
    retry_base_s: float = 1.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DiscordTuning:
        """``FRONTDESK_DISCORD_READY_TIMEOUT`` and ``FRONTDESK_DISCORD_IDENTIFY_DELAY``."""
        def number(name: str, default: float) -> float:
            raw = (env.get(name) or "").strip()
            return float(raw) if raw else default

        return cls(ready_timeout=number("FRONTDESK_DISCORD_READY_TIMEOUT", cls.ready_timeout),
                   identify_delay=number("FRONTDESK_DISCORD_IDENTIFY_DELAY",
                                         cls.identify_delay),
                   retry_base_s=number("FRONTDESK_DISCORD_RETRY_BASE", cls.retry_base_s))


async def typing_once(channel: Any) -> None:
    """One "typing…" trigger in ``channel`` (``bot.adapters.typing_indicator`` renews it); a
    failed trigger changes nothing."""
    with contextlib.suppress(discord.HTTPException, OSError, aiohttp.ClientError):
        await channel.typing()  # one trigger, never cut off mid-request
