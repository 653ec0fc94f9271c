"""The backlog at a start: the messages a crash or a stop left open, answered per chat.

At ``attach`` the gateway hands a platform's open inbox to ``Backlog``. The messages are read
one by one (one whose record cannot be read is marked failed, the others go on), grouped per
chat into the turns that answer them (``backlog_bursts``: the lines a turn had taken up are one
turn again, the others grouped as they would have been live) and answered chat by chat, the
chats at once, each in its own order under its chat's lock, so a new message in a chat with a
backlog waits for that backlog and nowhere else.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.chat.bursts import MAX_CHARS, MAX_MESSAGES, MAX_WAIT_S, Key, key_of, mergeable
from bot.chat.locks import ChatLocks
from bot.delivery.inbox import Inbox, InboxItem
from bot.messages import IncomingMessage

log = logging.getLogger(__name__)

AnswerTurn = Callable[[list[IncomingMessage]], Awaitable[object]]  # under the chat's lock


class Backlog:
    """Answers what a platform's inbox still holds open, per chat, in order."""

    def __init__(self, inbox: Inbox, locks: ChatLocks, window: float,
                 answer: AnswerTurn) -> None:
        """``window`` is the bursts' merge window; ``answer`` answers one turn, its chat's
        lock held (the gateway's)."""
        self.inbox = inbox
        self.locks = locks
        self.window = window
        self.answer = answer
        self.recovering: set[asyncio.Task[None]] = set()  # chats' backlogs being answered

    async def answer_open(self, platform: str, *, background: bool = False) -> None:
        """Answer the platform's open messages. ``background``: return once every chat's
        backlog holds its lock (an adapter then polls at once), else once all are answered."""
        backlog = open_backlog(self.inbox, platform, self.window)
        locked = [asyncio.Event() for _ in backlog]
        chats = [asyncio.create_task(self._answer_chat(chat, turns, held))
                 for (chat, turns), held in zip(backlog.items(), locked, strict=True)]
        self.recovering.update(chats)
        for task in chats:
            task.add_done_callback(self.recovering.discard)
        if background:
            for held in locked:
                await held.wait()
        else:
            await asyncio.gather(*chats)

    async def _answer_chat(self, chat: tuple[str, str], turns: list[list[IncomingMessage]],
                           locked: asyncio.Event) -> None:
        """One chat's backlog, in order, under the chat's lock from first to last; a turn
        whose answer fails is logged and stays open for the next start."""
        async with self.locks.of(*chat):
            locked.set()
            for turn in turns:
                try:
                    await self.answer(turn)
                except Exception:
                    log.exception("recovering message %s/%s failed; it stays open",
                                  turn[0].platform, turn[0].message_id)


def open_backlog(inbox: Inbox, platform: str,
                 window: float) -> dict[tuple[str, str], list[list[IncomingMessage]]]:
    """A platform's open inbox messages per chat, as the turns that answer them, oldest first
    (``backlog_bursts``); each record read on its own: one that cannot be read is marked
    failed and the others go on."""
    backlog: dict[tuple[str, str], list[tuple[IncomingMessage, InboxItem]]] = {}
    for item in inbox.open_messages(platform):
        try:
            msg = IncomingMessage.from_record(item.payload)
        except ValueError as unreadable:
            log.warning("inbox message %s/%s/%s is unreadable (%s); marked failed",
                        item.platform, item.chat_id, item.message_id, unreadable)
            inbox.fail(item.platform, item.chat_id, item.message_id,
                        f"unreadable: {unreadable}")
            continue
        backlog.setdefault((msg.platform, msg.chat_id), []).append((msg, item))
    return {chat: backlog_bursts(messages, window) for chat, messages in backlog.items()}


@dataclass
class _Group:
    messages: list[IncomingMessage]
    items: list[InboxItem]


def backlog_bursts(backlog: Sequence[tuple[IncomingMessage, InboxItem]],
                   window: float) -> list[list[IncomingMessage]]:
    """A chat's open messages after a restart, as the turns that answer them, in order.

    Messages a turn had taken up share its run id: they are one turn again. The others are
    grouped as they would have been live, by when the inbox received them.
    """
    groups: list[_Group] = []
    by_run: dict[str, _Group] = {}
    open_: dict[Key, _Group] = {}  # per person: the burst still taking lines
    for msg, item in backlog:
        key = key_of(msg)
        if item.run_id is not None and item.run_id in by_run:
            by_run[item.run_id].messages.append(msg)
            by_run[item.run_id].items.append(item)
            continue
        current = open_.pop(key, None)
        if current is not None and item.run_id is None and mergeable(msg) \
                and joins(current, msg, item, window):
            current.messages.append(msg)
            current.items.append(item)
            open_[key] = current
            continue
        group = _Group([msg], [item])
        groups.append(group)
        if item.run_id is not None:
            by_run[item.run_id] = group
        elif mergeable(msg) and window > 0:
            open_[key] = group
    return [group.messages for group in groups]


def joins(group: _Group, msg: IncomingMessage, item: InboxItem, window: float) -> bool:
    """Whether a line received at ``item.received_at`` would have joined this burst live."""
    chars = sum(len(m.text) + 1 for m in group.messages) + len(msg.text)
    return (len(group.messages) < MAX_MESSAGES and chars <= MAX_CHARS
            and item.received_at - group.items[-1].received_at <= window
            and item.received_at - group.items[0].received_at <= MAX_WAIT_S)
