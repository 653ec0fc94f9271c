"""Take in Telegram updates without losing or doubling one: record, confirm, then answer.

python-telegram-bot's own updater confirms a batch with its next ``getUpdates`` whether or not
the batch was handled, so a crash would lose it. Here the raw batch is fetched, every new
message (and button press) is recorded in one SQLite transaction together with the new update
offset, and only then is the next batch asked for. Each update is taken on its own: one that
cannot be read is recorded as failed (``frontdesk runs`` lists it) and confirmed with the rest.
A message found in the inbox at start is answered by ``Gateway.attach``; a press is kept as a
``telegram:press:<update id>`` cursor until it is handled. Each chat's messages are answered
in order, different chats at once. A batch that cannot be recorded because the disk is full is
not confirmed: Telegram keeps it, and it is asked for again every ``DISK_RETRY_S`` seconds
until it is recorded (the desk tells the owner once).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from telegram import Bot, User
from telegram.error import Conflict, NetworkError, RetryAfter, TimedOut

from bot.adapters.base import Adapter, AdapterCursors
from bot.adapters.chains import ChatChains
from bot.adapters.telegram.adapter import TelegramAdapter, retry_after_seconds
from bot.adapters.telegram.updates import (
    ALLOWED_UPDATES,
    PLATFORM,
    Press,
    Unreadable,
    parse_update,
)
from bot.config.disk import disk_full
from bot.messages import Accepted, Inbound, IncomingMessage

log = logging.getLogger(__name__)
OFFSET_CURSOR = "telegram:offset"
PRESS_PREFIX = "telegram:press:"
PRESS_DONE = "done"
POLL_TIMEOUT_S = 25  # Telegram holds a long poll open up to this long when nothing comes
MAX_BACKOFF_S = 30.0
DISK_RETRY_S = 2.0  # a batch a full disk refused is asked for again this often


class Intake:
    """Records updates durably and answers them, each chat in order."""

    def __init__(self, bot: Bot, me: User, desk: Inbound[Adapter], adapter: TelegramAdapter,
                 cursors: AdapterCursors) -> None:
        self.bot = bot
        self.me = me
        self.desk = desk
        self.adapter = adapter
        self.cursors = cursors  # a batch and its offset share one transaction
        self.chains = ChatChains()  # each chat's answers in order, chats side by side

    # -- recording --------------------------------------------------------------------------
    def accept(self, raws: list[dict[str, Any]], *, confirm: bool) -> list[Accepted | Press]:
        """Record the new messages and presses of a batch (and, when ``confirm``, the offset
        past it) in one transaction; return what is to be answered."""
        todo: list[Accepted | Press] = []
        with self.cursors.together():
            for raw in raws:
                try:
                    item = parse_update(raw, self.bot, self.me)
                    if isinstance(item, IncomingMessage):
                        if (accepted := self.desk.accept(item)) is not None:
                            todo.append(accepted)
                    elif isinstance(item, Press) and self._keep_press(item):
                        todo.append(item)
                except Exception as exc:  # one bad update never holds up the others
                    if disk_full(exc):  # not unreadable: the whole batch waits for room
                        raise
                    item = Unreadable.of(raw, exc)
                if isinstance(item, Unreadable):
                    self._fail(item)
            ids = [raw["update_id"] for raw in raws if isinstance(raw.get("update_id"), int)]
            if confirm and ids:
                self.cursors.set(OFFSET_CURSOR, str(max(ids) + 1))
        return todo

    def _fail(self, item: Unreadable) -> None:
        log.warning("Telegram update %s is unreadable (%s); marked failed", item.update_id,
                    item.reason)
        self.desk.unreadable(PLATFORM, item.chat_id, item.message_id, item.user_id,
                             {"update_id": item.update_id}, item.reason)

    def _keep_press(self, press: Press) -> bool:
        key = f"{PRESS_PREFIX}{press.update_id}"
        if self.cursors.get(key) is not None:
            return False  # delivered before: handled, or being handled
        self.cursors.set(key, json.dumps(press.to_json()))
        return True

    async def replay_presses(self) -> None:
        """Answer the presses a crash left unhandled."""
        for value in self.cursors.with_prefix(PRESS_PREFIX).values():
            if value != PRESS_DONE:
                self.dispatch(Press.from_json(json.loads(value)))

    # -- answering --------------------------------------------------------------------------
    def dispatch(self, item: Accepted | Press) -> None:
        """Answer in the background, after whatever this chat is already waiting for."""
        origin = item.message if isinstance(item, Accepted) else item
        chat = origin.chat_id or f"user:{origin.user_id}"
        self.chains.add(chat, lambda: self._answer(item))

    async def _answer(self, item: Accepted | Press) -> None:
        try:
            if isinstance(item, Press):
                await self.adapter.press(item)
                self.cursors.set(f"{PRESS_PREFIX}{item.update_id}", PRESS_DONE)
            elif item.level is None:
                await self.desk.process(item)  # a stranger: one refusal, no typing
            else:
                async with self.adapter.typing(item.message.chat_id):
                    await self.desk.process(item)
        except Exception as exc:
            if disk_full(exc):  # it stays open, held: the desk said so once and answers it
                log.debug("answering a Telegram update waits for room on the disk")
            else:
                log.exception("answering a Telegram update failed")

    async def drain(self) -> None:
        """Stop answering (what was recorded is answered after the next start)."""
        await self.chains.cancel()

    async def idle(self) -> None:
        """Wait until every dispatched update has been answered (tests, the bench)."""
        while self.chains.tasks:
            await asyncio.gather(*self.chains.tasks, return_exceptions=True)

    # -- long polling -------------------------------------------------------------------------
    async def poll_forever(self) -> None:
        """Fetch, record, confirm, answer in the background; again, until cancelled."""
        await self.adapter.call("-", lambda: self.bot.delete_webhook(drop_pending_updates=False))
        offset = int(self.cursors.get(OFFSET_CURSOR) or 0)
        backoff = 1.0
        while True:
            try:
                raws = await self.fetch(offset)
            except RetryAfter as flood:
                await asyncio.sleep(retry_after_seconds(flood))
                continue
            except TimedOut:
                continue  # a long poll that outlived its read time-out: just ask again
            except (NetworkError, Conflict) as error:  # Conflict: another poller, for now
                log.warning("getUpdates failed (%s); again in %.0f s", error, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = 1.0
            batch = [raw for raw in raws if isinstance(raw, dict)]
            if not batch:
                continue
            try:
                todo = self.accept(batch, confirm=True)
            except Exception as exc:
                if not disk_full(exc):
                    raise
                self.desk.not_recorded(exc)  # unconfirmed: Telegram sends the batch again
                await asyncio.sleep(DISK_RETRY_S)
                continue
            for item in todo:
                self.dispatch(item)
            offset = int(self.cursors.get(OFFSET_CURSOR) or offset)

    async def fetch(self, offset: int) -> list[Any]:
        """One long poll for raw updates (parsed later, one by one)."""
        result = await self.bot.do_api_request(
            "getUpdates", api_kwargs={"offset": offset, "timeout": POLL_TIMEOUT_S,
                                      "allowed_updates": ALLOWED_UPDATES},
            read_timeout=POLL_TIMEOUT_S + 10)
        return result if isinstance(result, list) else []
