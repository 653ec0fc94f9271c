"""What `frontdesk setup` asks the platforms: is this token good, and who just wrote to the bot.

Each probe raises ``ProbeError`` with one sentence for the user when it cannot answer. Telegram
through python-telegram-bot (getMe, then getUpdates until a person's message; its update is
confirmed so the bot does not answer the set-up message later); Discord's token through one
REST read (httpx), the first DM through a discord.py client that closes once it has one. The
libraries are imported when a probe runs: the wizard starts fast.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

import httpx

POLL_S = 10  # one long poll (Telegram answers at once when a message is there)


class ProbeError(Exception):
    """A probe's answer for the user: one sentence, no secret in it."""


@dataclass(frozen=True)
class Who:
    """A bot or a person, as the platform names them."""

    id: str
    name: str


async def telegram_bot(token: str, base_url: str | None) -> Who:
    """The bot this token signs in as (getMe)."""
    from telegram import Bot
    from telegram.error import InvalidToken, NetworkError

    from bot.adapters.telegram.start import DEFAULT_BASE_URL

    try:
        async with Bot(token, base_url=base_url or DEFAULT_BASE_URL) as bot:
            return Who(str(bot.bot.id), f"@{bot.bot.username}")
    except InvalidToken:
        raise ProbeError("Telegram refused that token; copy it again from @BotFather "
                         "(/mybots → your bot → API Token).") from None
    except NetworkError as exc:
        raise ProbeError(f"Telegram is unreachable ({exc}); check the network.") from None


async def telegram_first_sender(token: str, base_url: str | None, timeout_s: float) -> Who:
    """The first person to message the bot from now on (their update is confirmed)."""
    from telegram import Bot
    from telegram.error import Conflict, TelegramError

    from bot.adapters.telegram.start import DEFAULT_BASE_URL

    deadline = time.monotonic() + timeout_s
    offset: int | None = None
    async with Bot(token, base_url=base_url or DEFAULT_BASE_URL) as bot:
        while time.monotonic() < deadline:
            try:
                updates = await bot.get_updates(offset=offset, timeout=POLL_S,
                                                allowed_updates=["message"])
            except Conflict:
                raise ProbeError("another program is reading this bot's updates (a running "
                                 "`frontdesk run`, or a webhook): stop it and try again.") from None
            except TelegramError as exc:
                raise ProbeError(f"Telegram said: {exc}") from None
            for update in updates:
                offset = update.update_id + 1
                sender = update.message.from_user if update.message else None
                if sender is not None and not sender.is_bot:
                    await bot.get_updates(offset=offset, timeout=0)  # confirm it
                    return Who(str(sender.id), sender.full_name)
    raise ProbeError("no message arrived in time; run `frontdesk setup` again.")


async def discord_bot(token: str, base_url: str | None) -> Who:
    """The bot user this token belongs to (GET /users/@me)."""
    from bot.adapters.discord.base_url import endpoints_for

    base = endpoints_for(base_url).rest_base
    try:
        async with httpx.AsyncClient(base_url=base, timeout=10.0) as http:
            answer = await http.get("/users/@me", headers={"Authorization": f"Bot {token}"})
    except httpx.HTTPError:
        raise ProbeError("Discord is unreachable; check the network.") from None
    if answer.status_code == 401:
        raise ProbeError("Discord refused that token; Developer Portal → your application → "
                         "Bot → Reset Token, and paste the new one.")
    if answer.status_code != 200:
        raise ProbeError(f"Discord answered {answer.status_code}; try again in a moment.")
    user = answer.json()
    return Who(str(user["id"]), str(user.get("username") or user["id"]))


async def discord_first_dm(token: str, base_url: str | None, timeout_s: float) -> Who:
    """The first person to DM the bot from now on."""
    import discord

    from bot.adapters.discord.adapter import DiscordTuning, intents
    from bot.adapters.discord.base_url import point_discord_at

    point_discord_at(base_url)
    found: asyncio.Future[Who] = asyncio.get_running_loop().create_future()
    tuning = DiscordTuning.from_env(os.environ)
    client = discord.Client(intents=intents(), guild_ready_timeout=tuning.ready_timeout)

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.guild is None and not message.author.bot and not found.done():
            found.set_result(Who(str(message.author.id), message.author.display_name))

    async def run() -> None:
        try:
            await client.start(token)
        except discord.PrivilegedIntentsRequired:
            if not found.done():
                found.set_exception(ProbeError(
                    "the Message Content Intent is off: Developer Portal → Bot → Privileged "
                    "Gateway Intents → Message Content Intent, then try again."))
        except Exception as exc:  # a login failure ends the wait at once
            if not found.done():
                found.set_exception(ProbeError(f"Discord: {type(exc).__name__}"))

    task = asyncio.create_task(run())
    try:
        return await asyncio.wait_for(found, timeout_s)
    except TimeoutError:
        raise ProbeError("no DM arrived in time; run `frontdesk setup` again.") from None
    finally:
        await client.close()
        await asyncio.gather(task, return_exceptions=True)
