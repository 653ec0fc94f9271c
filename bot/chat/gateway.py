"""The gateway: every message from every adapter, in order, answered once.

It implements the adapters' inbound port (``bot.messages.Inbound``). Order for one message:
allowlist (checked once) → inbox record (before any work: ``accept``) → its turn
(``bot.chat.turns``: a lone line at once; close lines of one person, ``bot.chat.bursts``, as
one turn once they pause) → per-chat lock → the turn is
answered (``bot.chat.answering``: the handlers of ``bot.chat.handlers`` in order, then the
outbox). A stranger's message goes to pairing (``bot.access.pairing``), a button press to the
owner's decisions (``bot.chat.decisions``, by the button's kind). Every run gets an id derived
from the message (``bot.chat.senders``), so a message found unanswered after a crash continues
*its* run (finished nodes are not run again) instead of starting a second one. A message that
cannot be recorded because the disk is full is not accepted (its platform keeps it and sends it
again), and the disk's episode is told once (``bot.delivery.disk``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from bot.access.allowlist import Access
from bot.access.pairing import Strangers
from bot.adapters.base import Adapter
from bot.chat.answering import Answerer
from bot.chat.backlog import Backlog
from bot.chat.decisions import Decisions
from bot.chat.locks import ChatLocks
from bot.chat.turns import Turns
from bot.config.disk import disk_full
from bot.delivery.disk import DiskWatch
from bot.delivery.inbox import Inbox
from bot.delivery.outbox import Outbox
from bot.messages import Accepted, IncomingMessage, PressResult, Reply

log = logging.getLogger(__name__)


class Gateway:
    """Takes messages and presses from the adapters and hands each to what answers it."""

    def __init__(self, *, access: Access, inbox: Inbox, outbox: Outbox, strangers: Strangers,
                 answerer: Answerer, decisions: Decisions, locks: ChatLocks, turns: Turns,
                 on_start: Sequence[Callable[[], Awaitable[Any]]] = (),
                 disk: DiskWatch | None = None) -> None:
        """``locks`` are shared with the decisions (one thing at a time per chat);
        ``on_start`` is what ``start`` does before any message, in order; ``disk`` is told
        when a message cannot be recorded for a full disk."""
        self.access = access
        self.inbox = inbox
        self.outbox = outbox  # the one the owner notifier sends through too
        self.strangers = strangers
        self.answerer = answerer
        self.decisions = decisions
        self.locks = locks
        self.turns = turns  # lone lines at once, the lines of a burst as one turn
        self.on_start = list(on_start)
        self.disk = disk
        self.backlog = Backlog(inbox, locks, turns.bursts.window, lambda turn: answerer.answer(
            turn, self.level(turn[0]) == "owner"))  # what a crash or a stop left open
        self.answering: set[asyncio.Task[None]] = set()  # messages of people just allowed

    async def start(self) -> None:
        """Before any message: recover runs, queue owed outcomes, expire overdue waits, …"""
        for step in self.on_start:
            await step()

    async def attach(self, adapter: Adapter, *, recover: bool = True,
                     background: bool = False) -> None:
        """Start serving a platform: send what the outbox still owes, answer what's open
        (``bot.chat.backlog``: per chat, the chats at once; ``background``: return once each
        chat's backlog holds its lock, so an adapter polls at once)."""
        self.outbox.register(adapter)
        await self.outbox.flush(adapter.platform)
        if recover:
            await self.backlog.answer_open(adapter.platform, background=background)

    def level(self, msg: IncomingMessage) -> str | None:
        """'owner', 'allowed', or None for someone not on the allowlist."""
        return self.access.level(msg.platform, msg.user_id)

    # -- messages ------------------------------------------------------------------------
    async def handle(self, msg: IncomingMessage) -> Reply | None:
        """Answer one message at once (a console sends one at a time: nothing can join it);
        None when it is a re-delivery or an ignored stranger."""
        accepted = self.accept(msg)
        if accepted is None:
            return None
        return await self.process(accepted, gather=False)

    def accept(self, msg: IncomingMessage) -> Accepted | None:
        """Check the sender once and record the message in the inbox before any work on it;
        None for a re-delivery.

        ``handle`` is ``accept`` then ``process``. An adapter that must confirm receipt to its
        platform (Telegram's update offset) accepts first, confirms, then processes, so a crash
        in between finds the message in the inbox at ``attach``. A stranger's message is not
        recorded: ``process`` refuses it once per chat. On a full disk the error is raised
        (the message is not accepted: the adapter must not confirm it) and told to the disk's
        watch.
        """
        accepted = Accepted(msg, self.level(msg))
        if accepted.level is not None:
            try:
                recorded = self.inbox.record(msg.platform, msg.chat_id, msg.message_id,
                                             msg.user_id, msg.to_json())
            except Exception as exc:
                self.not_recorded(exc)
                raise
            if not recorded:
                return None
            self.turns.arrived(msg)  # recorded first: a crash in its burst's wait loses none
        return accepted

    def not_recorded(self, error: BaseException) -> None:
        """What an adapter took in could not be recorded: a full disk is told to its watch
        (one log line and one owner notice an episode); the platform sends it again."""
        if self.disk is not None and disk_full(error):
            self.disk.failed(error)

    def unreadable(self, platform: str, chat_id: str, message_id: str, user_id: str,
                   payload: Mapping[str, Any], reason: str) -> None:
        """An update that cannot be read: recorded as failed, so it is skipped for good."""
        self.inbox.record_failed(platform, chat_id, message_id, user_id, dict(payload), reason)

    def handled(self, platform: str, chat_id: str, message_id: str) -> bool:
        """Whether a recorded message's turn is over (answered, its answer or the owner's
        draft card handed to the outbox; or set aside as failed)."""
        return self.inbox.status(platform, chat_id, message_id) in {"answered", "failed"}

    async def process(self, accepted: Accepted, *, gather: bool = True) -> Reply | None:
        """Answer an accepted message; a stranger's is ``bot.access.pairing``'s. A lone line
        is answered at once; lines of a burst (``gather``) once the person pauses, as one:
        the reply goes to the process that answered the burst, the others get None."""
        msg = accepted.message
        if accepted.level is None:
            return await self.strangers.arrived(msg)
        return await self.turns.answer(
            msg, lambda burst: self.answerer.answer(burst, accepted.is_owner), gather=gather)

    # -- presses -------------------------------------------------------------------------
    async def press(self, platform: str, user_id: str, token: str,
                    press_id: str | None = None) -> PressResult:
        """A button press: only the owner's counts; forged, stale and second presses say so
        (``press_id``, the platform's id of the press, tells a replay from a second press)."""
        decided = await self.decisions.press(platform, user_id, token, press_id)
        if decided.admitted is not None:  # the owner allowed a stranger: answer their message
            task = asyncio.create_task(self._answer_admitted(decided.admitted))
            self.answering.add(task)
            task.add_done_callback(self.answering.discard)
        return decided.result

    async def _answer_admitted(self, accepted: Accepted) -> None:
        try:
            await self.process(accepted)
        except Exception:  # it stays open in the inbox: the next start answers it
            log.exception("answering %s user %s's waiting message failed",
                          accepted.message.platform, accepted.message.user_id)

    async def expire(self, now: float | None = None) -> int:
        """Follow ``on_expiry`` for every wait past its time and tell its chat; how many."""
        return await self.decisions.expire(now)
