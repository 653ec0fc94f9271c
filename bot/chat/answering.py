"""One turn answered: counted, read, routed through the handlers, delivered, closed.

The gateway hands a turn here with its chat's lock held (``answer``): its lines' tries are
counted first (a message whose answer crashed the process ``MAX_TRIES`` times is set aside,
visibly), a too-long text is refused before any model reads it, files become text and images
(``bot.media.attachments``, built on first use), the handlers (``bot.chat.handlers``) are asked
in order within the answer deadline while the answer is shown as it is written
(``bot.delivery.live``), and the reply goes out through the outbox (or, when the message
needs the owner's approval, is held as a draft: ``bot.chat.drafts``) before its messages are
closed in the inbox. A clean stop gives the tries back; a full disk holds the turn, open, for
when there is room (``bot.chat.held``: not a failure, not a crash); any other failure is a
visible answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.chat.bursts import merged
from bot.chat.decisions import FAILURE
from bot.chat.drafts import OwnerDrafts
from bot.chat.handlers import Handler, Turn
from bot.chat.held import HeldTurns
from bot.chat.senders import history_key, run_id_for, storable
from bot.chat.turns import Turns
from bot.config.disk import disk_full
from bot.delivery.inbox import Inbox
from bot.delivery.live import LiveReplies
from bot.delivery.outbox import Outbox
from bot.messages import IncomingMessage, Reply
from graphs.runs import Runs
from memory.notes import Memory

if TYPE_CHECKING:  # the pipeline is built on the first message with files
    from bot.media.attachments import Attachments

log = logging.getLogger("bot.chat.gateway")

TOO_SLOW = "This took too long, so I stopped; please try again."
MAX_MESSAGE_CHARS = 16_000
TOO_LONG = ("That message is too long for me ({:,} characters; I read at most "
            f"{MAX_MESSAGE_CHARS:,}). Please send a shorter one.")
MAX_TRIES = 3  # a message whose answer crashed the process this often is given up, visibly
GAVE_UP = ("Sorry, I could not answer this message: working on it stopped me {} times, so I "
           "have set it aside. Please send it again in other words.")


class Answerer:
    """Answers one turn at a time per chat (the gateway holds the chat's lock)."""

    def __init__(self, *, inbox: Inbox, outbox: Outbox, handlers: Sequence[Handler],
                 memory: Memory, runs: Runs, deadline: float,
                 make_files: Callable[[], Attachments], live: LiveReplies | None = None,
                 turns: Turns | None = None, held: HeldTurns | None = None,
                 gates: Sequence[Handler] = (), drafts: OwnerDrafts | None = None) -> None:
        """``handlers`` in the order they are asked; ``gates`` are asked first, before a
        message's files are read (a guest past their share pays for no transcription either);
        ``deadline`` seconds per turn;
        ``make_files`` builds the attachments pipeline on the first message with files;
        ``turns`` is told where a lone line's answer shows (a shown text ends its chance to
        give way to its burst); ``held`` keeps the turns a full disk stopped; ``drafts``
        holds the answer to a message that needs the owner's approval."""
        self.inbox = inbox
        self.outbox = outbox
        self.handlers = list(handlers)
        self.gates = list(gates)
        self.memory = memory  # the chat's history: the assistant's side is kept here
        self.runs = runs  # a turn past its deadline ends its run as failed
        self.deadline = deadline
        self.make_files = make_files
        self.live = live
        self.turns = turns
        self.held = held
        self.drafts = drafts
        self._files: Attachments | None = None

    @property
    def files(self) -> Attachments:
        """Photos, voice and documents become text and images (built on first use)."""
        if self._files is None:
            self._files = self.make_files()
        return self._files

    async def answer(self, burst: list[IncomingMessage], is_owner: bool) -> Reply:
        """Answer a burst of one person's messages as one (its chat's lock held): deliver,
        record, keep the history. Each try is counted first; past MAX_TRIES (every earlier one
        crashed the process: a poison message) the burst is set aside, visibly. A full disk
        raises, the turn held (``held``) with its messages open."""
        msg = merged(burst)
        ids = [line.message_id for line in burst]
        with self._held_if_full(burst, is_owner, took_up=False):
            tries = max(self.inbox.take_up(msg.platform, msg.chat_id, id_) for id_ in ids)
        with self._held_if_full(burst, is_owner, took_up=True):
            if tries > MAX_TRIES:
                return await self._give_up(msg, ids, tries - 1)
            return await self._answer_counted(msg, ids, is_owner)

    async def _answer_counted(self, msg: IncomingMessage, ids: list[str],
                              is_owner: bool) -> Reply:
        msg = replace(msg, text=storable(msg.text), user_name=storable(msg.user_name))
        if len(ids) > 1:  # before the run: after a crash the same lines are one turn again
            self.inbox.join_run(msg.platform, msg.chat_id, ids, run_id_for(msg))
        deadline = asyncio.timeout(self.deadline)
        try:
            async with deadline, self._showing(msg) as live:  # live: stops before delivery
                if self.turns is not None:
                    self.turns.showing(run_id_for(msg), live)
                reply = await self._answer(Turn(msg, is_owner, {"messages": ids}
                                                if ids[1:] else {}, live))
        except asyncio.CancelledError:  # a clean stop (SIGTERM): the messages stay open, and
            for id_ in ids:  # are not poison
                self.inbox.give_back(msg.platform, msg.chat_id, id_)
            raise
        except Exception as exc:
            if self.held is not None and disk_full(exc):
                raise  # not a failure to show: held, answered once there is room
            reply = self._failed(msg, exc, deadline.expired())
        if msg.needs_approval and self.drafts is not None:  # to the owner, not the sender
            reply = await self.drafts.hold(msg, reply)
        else:
            await self.outbox.deliver(msg.platform, msg.chat_id, msg.message_id, reply.text,
                                      reply.buttons, file=reply.file)
        status = "failed" if reply.route == "failed" else "answered"
        self.inbox.finish_all(msg.platform, msg.chat_id, ids, status, reply.route)
        self.discard(msg)
        if reply.route not in {"command", "failed", "draft"}:
            self.memory.add_history(history_key(msg), "assistant", reply.text)
        return reply

    @contextlib.contextmanager
    def _held_if_full(self, burst: list[IncomingMessage], is_owner: bool, *,
                      took_up: bool) -> Iterator[None]:
        """A full disk met inside holds the turn (``took_up``: its try was counted)."""
        try:
            yield
        except Exception as exc:
            if self.held is not None and disk_full(exc):
                self.held.hold(burst, is_owner, exc, took_up=took_up)
            raise

    async def _give_up(self, msg: IncomingMessage, ids: list[str], crashes: int) -> Reply:
        log.error("message %s/%s crashed its answer %d times; marked failed",
                  msg.platform, msg.message_id, crashes)
        for id_ in ids:
            self.inbox.fail(msg.platform, msg.chat_id, id_, f"gave up after {crashes} tries")
        reply = Reply(GAVE_UP.format(crashes), "failed", run_id_for(msg))
        if not msg.needs_approval:  # nothing reaches an unapproved sender by itself
            await self.outbox.deliver(msg.platform, msg.chat_id, msg.message_id, reply.text)
        self.discard(msg)  # set aside: its files are not needed any more
        return reply

    async def _answer(self, turn: Turn) -> Reply:
        msg = turn.message
        if len(msg.text) > MAX_MESSAGE_CHARS:  # refused before any model is paid to read it
            return Reply(TOO_LONG.format(len(msg.text)), "refused")
        for gate in self.gates:  # before anything is paid for, files included
            if (stopped := await gate.answer(turn)) is not None:
                return stopped
        if not msg.attachments:
            return await self.route(turn)
        # files become text and images first (bot.media.attachments)
        prepared = await self.files.prepare(msg, self.outbox.adapter(msg.platform))
        if prepared.answer is not None:
            return Reply(prepared.answer, prepared.route)
        read = replace(msg, text=storable(prepared.text))
        reply = await self.route(Turn(read, turn.is_owner, prepared.state(), turn.live))
        return replace(reply, text=prepared.framed(reply.text, msg.platform))

    async def route(self, turn: Turn) -> Reply:
        """The reply of the first handler that takes the turn (the last takes every one)."""
        for handler in self.handlers:
            reply = await handler.answer(turn)
            if reply is not None:
                return reply
        raise LookupError("no handler took the turn: the list must end with one that takes all")

    def _showing(self, msg: IncomingMessage) -> contextlib.AbstractAsyncContextManager[Any]:
        """The answer to ``msg`` shown in its chat as it is written (FRONTDESK_STREAM)."""
        if self.live is None or msg.needs_approval:  # a draft is shown to no one as written
            return contextlib.nullcontext()
        return self.live.showing(msg.platform, msg.chat_id, msg.message_id, msg.is_private)

    def discard(self, msg: IncomingMessage) -> None:
        """The message is answered: its files (if it had any) are not needed any more."""
        if msg.attachments:
            self.files.discard(msg)

    def _failed(self, msg: IncomingMessage, exc: Exception, past_deadline: bool) -> Reply:
        """The visible answer to a message whose work failed, or ran past its deadline (then
        its run ends as failed with reason ``deadline`` and the chat is free again)."""
        run_id = run_id_for(msg)
        if past_deadline and isinstance(exc, TimeoutError):
            log.warning("message %s/%s stopped at its deadline (%.0f s)", msg.platform,
                        msg.message_id, self.deadline)
            self.runs.fail(run_id, "deadline")
            return Reply(TOO_SLOW, "failed", run_id)
        log.error("message %s/%s failed", msg.platform, msg.message_id, exc_info=exc)
        return Reply(FAILURE, "failed", run_id)
