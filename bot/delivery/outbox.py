"""The outbox: every reply is written as numbered parts (``bot.delivery.parts``), then sent once.

One ``Outbox`` is built over those parts and shared by everything that sends: the gateway's
replies and the owner notifier's notices go through the same parts, the same adapters and the
same per-chat send locks, so a notice and a reply to one chat never interleave and a crash
between writing and sending resumes with the parts not yet sent (``flush`` at attach).

A part is marked sent the moment the adapter's ``send`` returns, before anything else, so the
only window for a repeat is a crash between the platform's accept and that one SQLite write.
When that write fails (a full disk), the part is remembered as sent in memory (``unmarked``)
and marked at its next flush instead of being sent again.
A part the platform refuses for good (``Undeliverable``) is marked failed and the chat goes
on; a moved chat (``ChatMoved``) is followed and remembered; a chat that cannot be reached
now keeps its parts, in order, for the next flush, while the other chats go on.

A reply may carry one file (``OutgoingFile``: a booked meeting's ``.ics``), kept with its
part (``bot.delivery.files``): it rides on the reply's last part, that part's text its caption,
when that text fits the platform's caption (``caption_limit``, counted in UTF-16 code units,
as Telegram counts, which is never fewer than characters); else it follows the text as a part
of its own with no caption. The reply's buttons, if any, go with the file then (they are
always on the last part). Either way it is sent once, in order, through the adapter's
``send_file``, and marked sent or failed like any part.

A reply shown live (``bot.delivery.live``) left partial messages in the chat, recorded in
``live_messages``: part *n* is then delivered as the edit of live message *n*, marked sent
with that message's id, and live messages past the last part are deleted, so the final text
is delivered once and no partial text is left behind, after a crash too. A final text never
ends with "…" (``settled``): that mark is the partial texts'.

Every write here (a part, a final edit, a deletion) waits for its slot in the bot's overall
pace (``bot.delivery.pace``, when one is given): it may wait, it is never dropped.

Usage::

    outbox = Outbox(parts)
    outbox.register(adapter)                   # the platform's adapter, once it runs
    await outbox.deliver("telegram", "42", "m-7", "Hello!")
    await outbox.flush("telegram")             # what a crash left unsent
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable

from bot.adapters.base import Adapter, LiveAdapter
from bot.config.bounded import KeyedLocks
from bot.delivery.files import OutboxFiles
from bot.delivery.live import settled
from bot.delivery.pace import WritePace
from bot.delivery.parts import MAX_MOVES, OutboxPart, OutboxParts
from bot.delivery.shown import LiveMessages
from bot.messages import Button, ChatMoved, LiveRefused, OutgoingFile, Undeliverable

log = logging.getLogger(__name__)
CAPTION_LIMIT = 1024  # without a running adapter: the smallest caption (Telegram's)


class Outbox:
    """The outbox's parts, the adapters that send it, and one send lock per chat."""

    def __init__(self, parts: OutboxParts, shown: LiveMessages | None = None,
                 files: OutboxFiles | None = None, pace: WritePace | None = None) -> None:
        self.parts = parts
        self.pace = pace  # all of the bot's writes to a platform (None: no overall pace)
        self.shown = shown  # the partial messages of live replies, edited into the final
        self.files = files  # the files replies carry (None: replies are text only)
        self.adapters: dict[str, Adapter] = {}  # platform -> its running adapter
        # one per chat while a send holds or waits on it (none kept per chat ever seen)
        self.send_locks: KeyedLocks[tuple[str, str]] = KeyedLocks()
        self.unmarked: dict[int, str] = {}  # part id -> message id: sent, its mark refused

    def register(self, adapter: Adapter) -> None:
        """Send this platform's parts through ``adapter`` from now on."""
        self.adapters[adapter.platform] = adapter

    def adapter(self, platform: str) -> Adapter | None:
        """The running adapter of a platform, if any."""
        return self.adapters.get(platform)

    async def owner_chat(self, platform: str) -> str | None:
        """The owner's direct chat as the platform's adapter knows it; None without one."""
        adapter = self.adapters.get(platform)
        return await adapter.owner_chat() if adapter is not None else None

    def queued(self, platform: str, chat_id: str, key: str) -> bool:
        """Whether a reply under ``key`` was written to this chat's outbox already."""
        return bool(self.parts.parts(platform, chat_id, key))

    async def deliver_with(self, platform: str, chat_id: str, key: str, text: str,
                           file: OutgoingFile | None) -> None:
        """``deliver`` with a file and no buttons (a meeting's updated invitation)."""
        await self.deliver(platform, chat_id, key, text, file=file)

    async def deliver(self, platform: str, chat_id: str, key: str, text: str,
                      buttons: Iterable[Button] | None = None,
                      file: OutgoingFile | None = None) -> None:
        """Write the reply's parts (once per ``key``), then send those not yet sent.

        Without a running adapter the parts wait in the outbox table, unsplit, for ``flush``.
        """
        adapter = self.adapters.get(platform)
        text = settled(text)
        texts = [settled(part) for part in adapter.split(text)] if adapter else [text]
        marks = [{"label": b.label, "token": b.token} for b in buttons or []]
        if file is not None:
            texts = self._place(platform, chat_id, key, texts, file, adapter)
        self.parts.enqueue(platform, chat_id, key, texts, marks or None)
        if adapter is not None:
            await self.flush(platform, chat_id)

    def _place(self, platform: str, chat_id: str, key: str, texts: list[str],
               file: OutgoingFile, adapter: Adapter | None) -> list[str]:
        """Keep the file (before the parts) on the last part, or on a part of its own after
        the text; the texts, with that empty part added when the file has one."""
        if self.files is None:
            raise ValueError("this outbox sends text only: it was built without its files")
        limit = adapter.caption_limit if adapter is not None else CAPTION_LIMIT
        fits = len(texts[-1].encode("utf-16-le")) // 2 <= limit
        number = self.files.place(platform, chat_id, key, len(texts) + (0 if fits else 1),
                                  file)
        return texts + [""] * (number - len(texts))

    async def flush(self, platform: str, chat_id: str | None = None) -> None:
        """Send every unsent part of a platform (or one chat), in order, each at most once.

        For one chat, a failure to reach it is raised (the caller's message stays open); for
        a whole platform it is logged and the other chats go on.
        """
        adapter = self.adapters.get(platform)
        if adapter is None:
            return
        if chat_id is not None:
            await self._flush_chat(adapter, platform, chat_id)
            return
        for chat in dict.fromkeys(part.chat_id for part in self.parts.unsent(platform)):
            try:
                await self._flush_chat(adapter, platform, chat)
            except Exception:
                log.exception("could not send to %s chat %s; its parts wait for the next flush",
                              platform, chat)

    async def _flush_chat(self, adapter: Adapter, platform: str, chat: str) -> None:
        # One lock per chat: a chat waiting out flood control does not hold up the others.
        where = self.parts.chat_now(platform, chat)
        async with self.send_locks.held((platform, where)):
            for part in self.parts.unsent(platform):
                if part.chat_id == chat:
                    await self._send(adapter, part)

    async def _send(self, adapter: Adapter, part: OutboxPart) -> None:
        """Send one part where its chat is now; mark it sent, or failed for good."""
        if part.id in self.unmarked:  # sent already: only its mark was refused (a full disk)
            self._mark_sent(part, self.unmarked[part.id])
            if self.shown is not None:  # a live message it was the edit of is final now
                self.shown.settle(part.platform, part.chat_id, part.reply_key, part.part_no)
            await self._drop_live_extras(adapter, part,
                                         self.parts.chat_now(part.platform, part.chat_id))
            return
        buttons = [Button(b["label"], b["token"]) for b in part.buttons or []] or None
        target = self.parts.chat_now(part.platform, part.chat_id)
        file = self.files.of_part(part.platform, part.chat_id, part.reply_key, part.part_no) \
            if self.files is not None else None
        if file is None and await self._edit_live(adapter, part, target, buttons):
            return
        for _ in range(MAX_MOVES):
            await self._slot(part.platform)
            try:
                if file is not None:  # its caption is the part's text
                    message_id = await adapter.send_file(target, file, part.text, buttons,
                                                         key=part.send_key)
                else:
                    message_id = await adapter.send(target, part.text, buttons,
                                                    key=part.send_key)
            except ChatMoved as moved:
                log.info("%s chat %s moved to %s; following it", part.platform, target,
                         moved.chat_id)
                self.parts.move_chat(part.platform, target, moved.chat_id)
                target = moved.chat_id
                continue
            except Undeliverable as refused:
                self.parts.mark_failed(part.id, str(refused))
                log.warning("%s refused part %d/%d for chat %s for good (%s); marked failed",
                            part.platform, part.part_no, part.parts, part.chat_id, refused)
                return
            self._mark_sent(part, message_id)  # first thing after the accept
            await self._drop_live_extras(adapter, part, target)
            return
        self.parts.mark_failed(part.id, f"the chat moved more than {MAX_MOVES} times")

    def _mark_sent(self, part: OutboxPart, message_id: str) -> None:
        """Mark a part sent; if the mark cannot be written, remember it sent (in memory)."""
        try:
            self.parts.mark_sent(part.id, message_id)
        except Exception:
            self.unmarked[part.id] = message_id
            raise
        self.unmarked.pop(part.id, None)

    async def _edit_live(self, adapter: Adapter, part: OutboxPart, target: str,
                         buttons: list[Button] | None) -> bool:
        """Deliver a part as the edit of the live message showing it; False when there is
        none (or it cannot be edited: the part is then sent as a new message)."""
        if self.shown is None or not isinstance(adapter, LiveAdapter):
            return False
        message_id = self.shown.of(part.platform, part.chat_id, part.reply_key).get(part.part_no)
        if message_id is None:
            return False
        await self._slot(part.platform)
        try:
            await adapter.edit(target, message_id, part.text, buttons, final=True)
        except LiveRefused as refused:  # gone, or too old to edit: a new message instead
            log.info("could not edit live message %s in %s chat %s (%s); sending anew",
                     message_id, part.platform, target, refused)
            with contextlib.suppress(Exception):  # never left partial where it can go
                await self._slot(part.platform)
                await adapter.delete(target, message_id)
            self.shown.settle(part.platform, part.chat_id, part.reply_key, part.part_no)
            return False
        except Undeliverable as refused:
            self.parts.mark_failed(part.id, str(refused))
            log.warning("%s refused part %d/%d for chat %s for good (%s); marked failed",
                        part.platform, part.part_no, part.parts, part.chat_id, refused)
            return True
        self._mark_sent(part, message_id)  # first thing after the accept
        self.shown.settle(part.platform, part.chat_id, part.reply_key, part.part_no)
        await self._drop_live_extras(adapter, part, target)
        return True

    async def _drop_live_extras(self, adapter: Adapter, part: OutboxPart, target: str) -> None:
        """After a reply's last part: delete the live messages the final text did not need."""
        if self.shown is None or part.part_no != part.parts or \
                not isinstance(adapter, LiveAdapter):
            return
        extras = self.shown.of(part.platform, part.chat_id, part.reply_key)
        for number, message_id in sorted(extras.items()):
            try:
                await self._slot(part.platform)
                await adapter.delete(target, message_id)
            except Exception:  # it stays, partial-marked: never mistaken for an answer
                log.warning("could not delete live message %s in %s chat %s", message_id,
                            part.platform, target, exc_info=True)
            self.shown.settle(part.platform, part.chat_id, part.reply_key, number)

    async def _slot(self, platform: str) -> None:
        """Wait for this write's turn in the bot's overall pace (never refused)."""
        if self.pace is not None:
            await self.pace.take(platform)
