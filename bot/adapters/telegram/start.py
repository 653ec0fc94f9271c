"""Start Telegram: sign in, register the menu, attach the adapter, then poll or serve a webhook.

``run_telegram(desk, cursors, settings, menu)`` is what ``frontdesk run`` starts when
``TELEGRAM_BOT_TOKEN`` is set. It checks the token (getMe), registers the chat commands, sends
what the outbox still owes, answers what a crash left open, then receives updates by long
polling (``telegram_intake``) or, when ``FRONTDESK_TELEGRAM_WEBHOOK_URL`` is set, through a
webhook (``telegram_webhook``). It is the only module that knows all three Telegram parts, so
none of them imports another that imports it back.
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from collections.abc import Mapping, Sequence

import httpx
from telegram import Bot, BotCommand, User
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.request import HTTPXRequest
from telegram.warnings import PTBUserWarning

from bot.adapters.base import Adapter, AdapterCursors
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.files import base_file_url
from bot.adapters.telegram.intake import Intake
from bot.adapters.telegram.webhook import WebhookConfig, serve_webhook
from bot.config.banner import adapter_line, announce
from bot.config.settings import Settings
from bot.messages import Inbound, MenuCommand

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.telegram.org/bot"
START_DESCRIPTION = "what this bot is and does"


def make_bot(settings: Settings) -> Bot:
    """A ``Bot`` for the configured token and base URL, with room for 200 chats at once."""
    assert settings.telegram_bot_token, "run_telegram needs TELEGRAM_BOT_TOKEN"
    # One TLS context for both clients, made as httpx makes its own: loading the certificates
    # takes tens of milliseconds, which each client would otherwise pay at start.
    tls = {"verify": httpx.create_ssl_context()}
    return Bot(settings.telegram_bot_token,
               base_url=settings.telegram_base_url or DEFAULT_BASE_URL,
               base_file_url=base_file_url(settings.telegram_base_file_url,
                                           settings.telegram_base_url),
               request=HTTPXRequest(connection_pool_size=256, pool_timeout=30.0,
                                    httpx_kwargs=tls),
               get_updates_request=HTTPXRequest(connection_pool_size=2, read_timeout=40.0,
                                                httpx_kwargs=tls))


async def register_commands(bot: Bot, menu: Sequence[MenuCommand]) -> None:
    """The command menu: /start and the chat commands every adapter shares."""
    commands = [BotCommand("start", START_DESCRIPTION)]
    commands += [BotCommand(entry.name, entry.description) for entry in menu]
    try:
        await bot.set_my_commands(commands)
    except TelegramError as error:  # a menu is a nicety: never a reason not to start
        log.warning("could not register the command menu: %s", error)


async def signed_in(settings: Settings, max_delay: float = 60.0) -> Bot:
    """A bot that passed getMe: a refused token stops with one sentence; an unreachable
    Telegram (the network still coming up) is tried again, with backoff, until it answers."""
    delay = min(1.0, max_delay)
    while True:
        bot = make_bot(settings)
        try:
            await bot.initialize()
            return bot
        except InvalidToken:
            raise SystemExit("frontdesk: Telegram refused TELEGRAM_BOT_TOKEN. Copy the token "
                             "again from @BotFather into .env.") from None
        except NetworkError as exc:  # TimedOut included
            log.warning("Telegram is unreachable (%s); trying again in %.0f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, max_delay)


async def run_telegram(desk: Inbound[Adapter], cursors: AdapterCursors, settings: Settings,
                       menu: Sequence[MenuCommand],
                       environ: Mapping[str, str] | None = None) -> None:
    """Serve Telegram until cancelled: polling, or a webhook when one is configured.

    ``desk`` is the inbound port the updates go to; ``cursors`` keeps the update offset (on
    the inbox's connection: an update's message and the new offset land in one transaction);
    ``menu`` is the chat commands Telegram's menu lists.
    """
    # Raw updates come through ``do_api_request("getUpdates")``, which PTB frowns upon.
    warnings.filterwarnings("ignore", message="Please use 'Bot.getUpdates'",
                            category=PTBUserWarning)
    webhook = WebhookConfig.from_env(os.environ if environ is None else environ)
    async with await signed_in(settings) as bot:
        me: User = bot.bot
        log.info("Telegram: signed in as @%s", me.username)
        announce(adapter_line("Telegram", f"@{me.username}", str(me.id),
                              settings.telegram_owner_id, settings.telegram_allowed_users))
        adapter = TelegramAdapter(bot, desk, settings.telegram_owner_id)
        intake = Intake(bot, me, desk, adapter, cursors)
        await register_commands(bot, menu)
        await desk.attach(adapter, background=True)
        await intake.replay_presses()
        try:
            if webhook is not None:
                await serve_webhook(bot, intake, webhook)
            else:
                await intake.poll_forever()
        finally:
            await intake.drain()
