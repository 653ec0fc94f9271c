"""The turns a full disk kept from being answered, answered once there is room again.

A turn whose answer meets a full disk (its try cannot be counted, its run cannot be stored,
its reply cannot be written to the outbox) is neither failed nor counted as a crash: its
messages stay open in the inbox and the turn is held here (``hold``). When the disk's watch
(``bot.delivery.disk``) sees a write work again, ``answer_all`` answers each held turn under
its chat's lock, in the order they were held; a turn whose messages were closed meanwhile is
skipped, and a try the full disk counted before it failed is given back first (a full disk is
not a poison message: ``bot.chat.answering.MAX_TRIES`` counts crashes only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.chat.locks import ChatLocks
from bot.config.disk import disk_full
from bot.delivery.disk import DiskWatch
from bot.delivery.inbox import Inbox
from bot.messages import IncomingMessage

log = logging.getLogger(__name__)

AnswerTurn = Callable[[list[IncomingMessage], bool], Awaitable[object]]  # burst, is_owner


@dataclass(frozen=True)
class HeldTurn:
    """One turn the full disk held: its lines, whose they are, whether its try was counted."""

    burst: list[IncomingMessage]
    is_owner: bool
    took_up: bool


class HeldTurns:
    """The held turns, oldest first, and answering them again."""

    def __init__(self, disk: DiskWatch, inbox: Inbox, locks: ChatLocks) -> None:
        self.disk = disk
        self.inbox = inbox
        self.locks = locks
        self.turns: list[HeldTurn] = []

    def hold(self, burst: list[IncomingMessage], is_owner: bool, error: BaseException, *,
             took_up: bool) -> None:
        """The full disk stopped this turn: keep it (once) and tell the disk's watch."""
        self.disk.failed(error)
        ids = [line.message_id for line in burst]
        if not any([line.message_id for line in turn.burst] == ids for turn in self.turns):
            self.turns.append(HeldTurn(list(burst), is_owner, took_up))

    async def answer_all(self, answer: AnswerTurn) -> int:
        """Answer every held turn, each under its chat's lock; how many were answered. A turn
        the disk stops again is held again (``answer`` holds it)."""
        turns, self.turns = self.turns, []
        answered = 0
        for turn in turns:
            first = turn.burst[0]
            async with self.locks.of(first.platform, first.chat_id):
                if not any(self.inbox.status(line.platform, line.chat_id, line.message_id)
                           == "received" for line in turn.burst):
                    continue  # closed meanwhile (a restart's backlog answered it)
                try:
                    if turn.took_up:
                        for line in turn.burst:
                            self.inbox.give_back(line.platform, line.chat_id, line.message_id)
                    await answer(turn.burst, turn.is_owner)
                    answered += 1
                except Exception as exc:
                    if disk_full(exc):  # full again: held again (once), for the next room
                        self.hold(turn.burst, turn.is_owner, exc, took_up=turn.took_up)
                    else:
                        log.exception("answering held message %s/%s failed; it stays open",
                                      first.platform, first.message_id)
        return answered
