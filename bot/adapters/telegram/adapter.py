"""The Telegram adapter: python-telegram-bot's ``Bot`` on the gateway's side of Telegram.

``TelegramAdapter`` is what the gateway's outbox sends through: it splits replies on the
rendered length, sends each part as HTML (plain text when Telegram refuses the entities),
waits out flood control per chat, reports a refusal for good (``Undeliverable``) and a group
upgraded to a supergroup (``ChatMoved``) to the outbox, and shows approvals as inline
buttons whose presses it hands to the gateway. Updates come in through ``telegram_intake``
(long polling) or ``telegram_webhook``; ``telegram_start.run_telegram`` signs in and wires
them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from bot.adapters.base import Attachment, Button, ChatMoved, PressResult, Undeliverable
from bot.adapters.telegram import files as telegram_files
from bot.adapters.telegram.format import split_reply
from bot.adapters.telegram.markdown import escape_html, html_to_plain
from bot.adapters.telegram.updates import PLATFORM, Press
from bot.chat.gateway import Gateway

log = logging.getLogger(__name__)
T = TypeVar("T")

TYPING_AFTER_S = 0.3  # a quick answer needs no "typing…" (Telegram's own advice)
TYPING_EVERY_S = 4.5  # Telegram shows "typing…" for 5 s after each chat action
NETWORK_RETRIES = 6  # then the part stays in the outbox for the next flush


def retry_after_seconds(error: RetryAfter) -> float:
    """``retry_after`` as seconds, whether the library gives an int or a timedelta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns about the int/timedelta switch
        value = error.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


def buttons_markup(buttons: list[Button] | None) -> InlineKeyboardMarkup | None:
    """One row of inline buttons whose callback_data is the gateway's opaque token."""
    if not buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.token)
                                  for b in buttons]])


def _refused_entities(error: BadRequest) -> bool:
    """Telegram could not parse the HTML ("can't parse entities", "can't find end of the
    entity …"): the same text goes again as plain text."""
    return "entit" in error.message.lower()


class TelegramAdapter:
    """What the gateway calls to reach Telegram (the ``Adapter`` protocol), plus presses."""

    platform = PLATFORM

    def __init__(self, bot: Bot, gateway: Gateway, owner_id: str | None) -> None:
        self.bot = bot
        self.gateway = gateway
        self.owner_id = owner_id

    # -- the Adapter protocol ---------------------------------------------------------------
    def split(self, text: str) -> list[str]:
        """The reply as Telegram HTML parts of at most 4,096 visible characters, numbered."""
        return [part.html for part in split_reply(text)]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Send one HTML part (as plain text if Telegram refuses its entities).

        Telegram has no client id to deduplicate by: ``key`` is unused, and a crash between
        Telegram's accept and the outbox's mark shows that one part twice (README). So the
        message id is returned the moment Telegram answers, with nothing in between.
        """
        markup = buttons_markup(buttons)
        try:
            target = int(chat_id)
        except ValueError:
            raise Undeliverable(f"not a Telegram chat id: {chat_id!r}") from None
        try:
            try:
                message: Message = await self.call(chat_id, lambda: self.bot.send_message(
                    target, text, parse_mode=ParseMode.HTML, reply_markup=markup))
            except BadRequest as refused:
                if not _refused_entities(refused):
                    raise
                log.info("Telegram refused the formatting (%s); sending plain text", refused)
                message = await self.call(chat_id, lambda: self.bot.send_message(
                    target, html_to_plain(text), reply_markup=markup))
        except ChatMigrated as moved:  # the group is a supergroup now, under a new id
            raise ChatMoved(str(moved.new_chat_id)) from moved
        except (BadRequest, Forbidden) as refused:  # the same request would be refused again
            raise Undeliverable(f"Telegram: {refused}") from refused
        return str(message.message_id)

    async def owner_chat(self) -> str | None:
        """The owner's private chat with the bot has the owner's user id."""
        return self.owner_id

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """A message's file, through getFile and the file URL (``bot.media.attachments``)."""
        return await self.call("-", lambda: telegram_files.fetch(self.bot, attachment,
                                                                 max_bytes))

    # -- calling Telegram -------------------------------------------------------------------
    async def call(self, chat_id: str, request: Callable[[], Awaitable[T]]) -> T:
        """One API call for one chat: flood control waited out as long as Telegram asks (never
        given up), network errors retried with backoff; a refusal (400, 403) raised at once."""
        failures, delay = 0, 0.5
        while True:
            try:
                return await request()
            except RetryAfter as flood:
                wait = retry_after_seconds(flood)
                log.info("flood control in chat %s: waiting %.1f s", chat_id, wait)
                await asyncio.sleep(wait)
            except BadRequest:
                raise
            except NetworkError as error:  # includes time-outs and Telegram's 5xx
                failures += 1
                if failures >= NETWORK_RETRIES:
                    raise
                log.warning("Telegram unreachable (%s); retry in %.1f s", error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    @contextlib.asynccontextmanager
    async def typing(self, chat_id: str) -> AsyncIterator[None]:
        """Show "typing…" in a chat while the block runs, once it takes noticeable time."""

        async def keep_typing() -> None:
            await asyncio.sleep(TYPING_AFTER_S)
            while True:
                with contextlib.suppress(TelegramError):
                    await self.bot.send_chat_action(int(chat_id), ChatAction.TYPING)
                await asyncio.sleep(TYPING_EVERY_S)

        task = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- approvals ----------------------------------------------------------------------------
    async def press(self, press: Press) -> PressResult:
        """Hand a button press to the gateway, answer it, and edit the decision in."""
        # The callback query's id: a press replayed after a restart repeats it, a second
        # press of the same button does not.
        result = await self.gateway.press(PLATFORM, press.user_id, press.data, press.query_id)
        try:
            await self.bot.answer_callback_query(press.query_id, result.alert[:200],
                                                 show_alert=not result.accepted)
        except TelegramError as error:  # too old after a restart: the edit still shows it
            log.info("could not answer a button press: %s", error)
        if result.accepted and press.chat_id is not None and press.message_id is not None:
            await self._show_decision(press, result.edit_text or result.alert)
        return result

    async def _show_decision(self, press: Press, decision: str) -> None:
        chat, message_id = int(press.chat_id or 0), press.message_id
        text = f"{press.message_html}\n\n<b>{escape_html(decision)}</b>".strip()
        try:
            await self.call(str(chat), lambda: self.bot.edit_message_text(
                text, chat, message_id, parse_mode=ParseMode.HTML, reply_markup=None))
        except TelegramError as error:  # too long or refused: at least take the buttons away
            log.info("could not edit the decision in (%s); removing the buttons", error)
            with contextlib.suppress(TelegramError):
                await self.call(str(chat), lambda: self.bot.edit_message_reply_markup(
                    chat, message_id, reply_markup=None))
