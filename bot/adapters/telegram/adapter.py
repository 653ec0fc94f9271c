"""The Telegram adapter: python-telegram-bot's ``Bot`` on the gateway's side of Telegram.

``TelegramAdapter`` is what the gateway's outbox sends through: it splits replies on the
rendered length, sends each part as HTML (plain text when Telegram refuses the entities),
waits out flood control per chat, reports a refusal for good (``Undeliverable``) and a group
upgraded to a supergroup (``ChatMoved``) to the outbox, and shows approvals as inline
buttons whose presses it hands to the inbound port. For live replies (``bot.delivery.live``) it
shows drafts in private chats (``sendMessageDraft``) and partial messages it then edits in
groups; a flood answer to any write keeps every later write to that chat waiting until its
``retry_after`` is over, and the "typing…" of a chat stops when a reply goes out there.
Updates come in through ``telegram_intake`` (long polling) or ``telegram_webhook``;
``telegram_start.run_telegram`` signs in and wires them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import logging
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Message
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from bot.adapters.base import Adapter
from bot.adapters.telegram import files as telegram_files
from bot.adapters.telegram.format import split_reply
from bot.adapters.telegram.markdown import escape_html, html_to_plain
from bot.adapters.telegram.updates import PLATFORM, Press
from bot.adapters.typing_indicator import Typing
from bot.messages import (
    Attachment,
    Button,
    ChatMoved,
    Flooded,
    Inbound,
    LiveRefused,
    OutgoingFile,
    PressResult,
    Undeliverable,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

TYPING_AFTER_S = 0.3  # a quick answer needs no "typing…" (Telegram's own advice)
TYPING_EVERY_S = 4.5  # Telegram shows "typing…" for 5 s after each chat action
NETWORK_RETRIES = 6  # then the part stays in the outbox for the next flush
LIVE_LIMIT = 4000  # characters of a partial text (Telegram's 4,096, less room for the mark)
CAPTION_LIMIT = 1024  # a document's caption, after entity parsing (the HTML is never shorter)


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

    live_limit = LIVE_LIMIT
    caption_limit = CAPTION_LIMIT

    def __init__(self, bot: Bot, desk: Inbound[Adapter], owner_id: str | None) -> None:
        self.bot = bot
        self.desk = desk  # the inbound port its presses go to
        self.owner_id = owner_id
        self.quiet_until: dict[str, float] = {}  # chat -> no write before (a flood answer)
        self.typing_shown = Typing(TYPING_EVERY_S, TYPING_AFTER_S)

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
        return await self._post(chat_id, text, lambda target, body, mode: self.bot.send_message(
            target, body, parse_mode=mode, reply_markup=markup))

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        """Send a file as a document (``sendDocument``, a multipart upload) with its HTML
        caption, as ``send`` sends a part; the content type is the file's own."""
        markup = buttons_markup(buttons)

        def upload(target: int, body: str, mode: str | None) -> Awaitable[Message]:
            document = InputFile(file.data, filename=file.name)
            document.mimetype = file.mime  # PTB guesses from the name; ours is known
            return self.bot.send_document(target, document, caption=body or None,
                                          parse_mode=mode if body else None,
                                          reply_markup=markup)

        return await self._post(chat_id, caption, upload)

    async def _post(self, chat_id: str, text: str,
                    request: Callable[[int, str, str | None], Awaitable[Message]]) -> str:
        """One message (``request(chat, text, parse_mode)``), HTML first, plain text if
        Telegram refuses the entities; refusals and moves as the outbox expects them."""
        try:
            target = int(chat_id)
        except ValueError:
            raise Undeliverable(f"not a Telegram chat id: {chat_id!r}") from None
        self.stop_typing(chat_id)  # a reply is going out: the chat stops seeing "typing…"
        try:
            try:
                message: Message = await self.call(
                    chat_id, lambda: request(target, text, ParseMode.HTML))
            except BadRequest as refused:
                if not _refused_entities(refused):
                    raise
                log.info("Telegram refused the formatting (%s); sending plain text", refused)
                message = await self.call(
                    chat_id, lambda: request(target, html_to_plain(text), None))
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
            await self._quiet(chat_id)
            try:
                return await request()
            except RetryAfter as flood:
                wait = retry_after_seconds(flood)
                log.info("flood control in chat %s: waiting %.1f s", chat_id, wait)
                self.quiet_until[chat_id] = time.monotonic() + wait
            except BadRequest:
                raise
            except NetworkError as error:  # includes time-outs and Telegram's 5xx
                failures += 1
                if failures >= NETWORK_RETRIES:
                    raise
                log.warning("Telegram unreachable (%s); retry in %.1f s", error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _quiet(self, chat_id: str) -> None:
        """Wait out the rest of a flood answer's ``retry_after`` for this chat, if any."""
        wait = self.quiet_until.get(chat_id, 0.0) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    async def live_call(self, chat_id: str, request: Callable[[], Awaitable[T]]) -> T:
        """One live write, one try: a flood answer (or a chat still waiting one out) raises
        ``Flooded``, a refusal ``LiveRefused``; the live reply decides what comes next."""
        wait = self.quiet_until.get(chat_id, 0.0) - time.monotonic()
        if wait > 0:
            raise Flooded(wait)
        try:
            return await request()
        except RetryAfter as flood:
            wait = retry_after_seconds(flood)
            self.quiet_until[chat_id] = time.monotonic() + wait
            raise Flooded(wait) from flood
        except BadRequest as refused:
            raise LiveRefused(refused.message) from refused

    def typing(self, chat_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Show "typing…" in a chat while the block runs, once it takes noticeable time,
        renewed every few seconds; it stops when the block ends or a reply goes out there."""

        async def trigger() -> None:
            with contextlib.suppress(TelegramError):
                await self.bot.send_chat_action(int(chat_id), ChatAction.TYPING)

        return self.typing_shown.showing(chat_id, trigger)

    def stop_typing(self, chat_id: str) -> None:
        """A reply goes out in this chat (or the run waits for someone): no more "typing…"."""
        self.typing_shown.stop(chat_id)

    # -- live replies (bot.delivery.live) -----------------------------------------------------
    def live_mode(self, chat_id: str, private: bool) -> str | None:
        """Drafts in a private chat, a growing message in a group."""
        return "draft" if private else "edit"

    async def draft(self, chat_id: str, draft_id: int, text: str) -> None:
        """``sendMessageDraft``: the partial text as the chat's draft (plain text)."""
        await self.live_call(chat_id, lambda: self.bot.send_message_draft(
            int(chat_id), draft_id, text))

    async def post(self, chat_id: str, text: str) -> str:
        """A partial text as a new message (plain text); its id."""
        self.stop_typing(chat_id)
        message: Message = await self.live_call(chat_id, lambda: self.bot.send_message(
            int(chat_id), text))
        return str(message.message_id)

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        """A partial text in place (one try), or, ``final``, an outbox part's HTML with its
        buttons (waited out and retried like ``send``); "not modified" counts as done."""
        target = int(chat_id)
        number = int(message_id)
        markup = buttons_markup(buttons)
        try:
            if not final:
                await self.live_call(chat_id, lambda: self.bot.edit_message_text(
                    text, target, number))
                return
            self.stop_typing(chat_id)
            try:
                await self.call(chat_id, lambda: self.bot.edit_message_text(
                    text, target, number, parse_mode=ParseMode.HTML, reply_markup=markup))
            except BadRequest as refused:
                if not _refused_entities(refused):
                    raise
                await self.call(chat_id, lambda: self.bot.edit_message_text(
                    html_to_plain(text), target, number, reply_markup=markup))
        except (BadRequest, LiveRefused) as refused:
            if "not modified" in str(refused).lower():
                return  # it shows this text already (an edit repeated after a crash)
            raise LiveRefused(str(refused)) from refused
        except Forbidden as refused:  # blocked, or removed from the group: for good
            raise Undeliverable(f"Telegram: {refused}") from refused

    async def delete(self, chat_id: str, message_id: str) -> None:
        """Remove a live message the final text did not need."""
        await self.call(chat_id, lambda: self.bot.delete_message(int(chat_id),
                                                                 int(message_id)))

    # -- approvals ----------------------------------------------------------------------------
    async def press(self, press: Press) -> PressResult:
        """Hand a button press to the inbound port, answer it, and edit the decision in."""
        # The callback query's id: a press replayed after a restart repeats it, a second
        # press of the same button does not.
        result = await self.desk.press(PLATFORM, press.user_id, press.data, press.query_id)
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
