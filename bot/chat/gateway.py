"""The gateway: every message from every adapter, in order, answered once.

Order for one message: allowlist (checked once) → inbox record (before any work) → its turn
(``bot.chat.turns``: a lone line at once, close lines of one person as one turn once they
pause, ``bot.chat.bursts``) → per-chat lock → a
chat command, a workflow command (``bot.chat.workflow_commands``), an answer to this
chat's waiting run, or a new run (the triage graph, or the plain agent loop with graph mode
off) → outbox (``bot.delivery.outbox``, shared with the owner notifier) → send. Every run
gets an id derived from the message (``bot.chat.senders``), so a message found unanswered
after a crash continues *its* run (finished nodes are not run again) instead of starting a
second one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from bot.access.allowlist import Access
from bot.access.pairing import Strangers, first_words
from bot.adapters.base import Accepted, Adapter, Button, IncomingMessage, PressResult, Reply
from bot.chat.answers import match_option
from bot.chat.approval_relay import ask_owner, relayed_wait
from bot.chat.backlog import Backlog
from bot.chat.bursts import Bursts, merged
from bot.chat.commands import Command, CommandHandler, parse
from bot.chat.decisions import FAILURE, NOT_OWNER, Decisions
from bot.chat.locks import ChatLocks
from bot.chat.meetings import MeetingChat
from bot.chat.senders import history_key, run_id_for, scope_of, sender_of, storable
from bot.chat.turns import Turns, chat_so_far
from bot.chat.workflow_commands import (
    WORKFLOW_COMMANDS,
    CommandRequest,
    WorkflowCommand,
    briefing_input,
)
from bot.config.settings import Settings
from bot.delivery.ledger import Ledger
from bot.delivery.live import LiveReplies
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.models.choices import in_chat
from graphs import Graph, RunResult
from graphs.runs import Runs, RunStore, WaitInfo, Workflow
from graphs.trace import prune
from memory.notes import Memory

if TYPE_CHECKING:  # the pipeline is built on the first message with files
    from bot.media.attachments import Attachments

log = logging.getLogger(__name__)

TOO_SLOW = "This took too long, so I stopped; please try again."
MAX_MESSAGE_CHARS = 16_000
TOO_LONG = ("That message is too long for me ({:,} characters; I read at most "
            f"{MAX_MESSAGE_CHARS:,}). Please send a shorter one.")
MAX_TRIES = 3  # a message whose answer crashed the process this often is given up, visibly
GAVE_UP = ("Sorry, I could not answer this message: working on it stopped me {} times, so I "
           "have set it aside. Please send it again in other words.")
OWED_WINDOW_S = 7 * 24 * 3600.0  # presses this recent are checked for an unqueued outcome
AnyWorkflow: TypeAlias = Graph | Workflow  # a graph workflow or a code one


class Gateway:
    """Routes messages and button presses between the adapters and the workflows."""

    def __init__(self, *, settings: Settings, ledger: Ledger, outbox: Outbox, memory: Memory,
                 store: RunStore, runs: Runs, access: Access, notifier: OwnerNotifier,
                 chat_workflow: AnyWorkflow, workflows: Mapping[str, AnyWorkflow],
                 today: Callable[[], str], commands: CommandHandler, strangers: Strangers,
                 decisions: Decisions, locks: ChatLocks, bursts: Bursts,
                 start_tools: Callable[[], Awaitable[None]],
                 make_files: Callable[[], Attachments],
                 meetings: MeetingChat | None = None,
                 live: LiveReplies | None = None) -> None:
        """``chat_workflow`` answers a plain message (triage, or the plain agent loop);
        ``workflows`` by name start the workflow commands and the briefing; ``today`` is the
        owner's ISO date; ``start_tools`` starts the MCP servers; ``make_files`` builds the
        attachments pipeline, on the first message with files; ``live`` shows an answer
        while it is written (``bot.delivery.live``)."""
        self.settings, self.ledger, self.memory = settings, ledger, memory
        self.outbox = outbox  # the one the owner notifier sends through too
        self.store, self.runs, self.notifier, self.allowlist = store, runs, notifier, access
        self.chat_workflow, self.workflows, self.today = chat_workflow, workflows, today
        self.commands, self.strangers, self.decisions = commands, strangers, decisions
        self.locks = locks  # shared with the decisions: one thing at a time per chat
        self.turns = Turns(bursts, locks, ledger, store, runs)  # lone lines, and bursts
        self.start_tools, self.make_files = start_tools, make_files
        self.meetings = meetings  # /meetings: a person's bookings with Cancel buttons
        self.live = live  # the answer shown as it is written (FRONTDESK_STREAM)
        self._files: Attachments | None = None
        self.backlog = Backlog(ledger, locks, bursts.window, lambda turn: self._answer_locked(
            turn, self.access(turn[0]) == "owner"))  # what a crash or a stop left open
        self.answering: set[asyncio.Task[None]] = set()  # messages of people just allowed

    @property
    def files(self) -> Attachments:
        """Photos, voice and documents become text and images (built on first use)."""
        if self._files is None:
            self._files = self.make_files()
        return self._files

    # -- adapters ------------------------------------------------------------------------
    async def start(self) -> None:
        """Before any message: continue the runs a crash left running, expire overdue waits."""
        prune(self.settings.traces_dir, self.settings.trace_days)  # and at every start
        await self.start_tools()  # MCP tools, before a recovered run may call one
        await self.runs.recover()
        await self.queue_owed_outcomes(time.time() - OWED_WINDOW_S)
        await self.notifier.resume()  # urgent messages held back by the hourly limit
        await self.strangers.resume()  # and the pairing prompts held back by theirs
        await self.expire()

    async def attach(self, adapter: Adapter, *, recover: bool = True,
                     background: bool = False) -> None:
        """Start serving a platform: send what the outbox still owes, answer what's open
        (``bot.chat.backlog``: per chat, the chats at once; ``background``: return once each
        chat's backlog holds its lock, so an adapter polls at once)."""
        self.outbox.register(adapter)
        await self.outbox.flush(adapter.platform)
        if not recover:
            return
        await self.backlog.answer_open(adapter.platform, background=background)

    def access(self, msg: IncomingMessage) -> str | None:
        """'owner', 'allowed', or None for someone not on the allowlist."""
        return self.allowlist.level(msg.platform, msg.user_id)

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
        recorded: ``process`` refuses it once per chat.
        """
        accepted = Accepted(msg, self.access(msg))
        if accepted.level is not None:
            if not self.ledger.record(msg.platform, msg.chat_id, msg.message_id, msg.user_id,
                                      msg.to_json()):
                return None
            self.turns.arrived(msg)  # recorded first: a crash in its burst's wait loses none
        return accepted

    async def process(self, accepted: Accepted, *, gather: bool = True) -> Reply | None:
        """Answer an accepted message; a stranger's is ``bot.access.pairing``'s. A lone line
        is answered at once; lines of a burst (``gather``) once the person pauses, as one:
        the reply goes to the process that answered the burst, the others get None."""
        msg = accepted.message
        if accepted.level is None:
            return await self.strangers.arrived(msg)
        return await self.turns.answer(
            msg, lambda burst: self._answer_locked(burst, accepted.is_owner), gather=gather)

    async def _answer_locked(self, burst: list[IncomingMessage], is_owner: bool) -> Reply:
        """Answer a burst of one person's messages as one (its chat's lock held): deliver,
        record, keep the history. Each try is counted first; past MAX_TRIES (every earlier one
        crashed the process: a poison message) the burst is set aside, visibly."""
        msg, ids = merged(burst), [line.message_id for line in burst]
        tries = max(self.ledger.take_up(msg.platform, msg.chat_id, id_) for id_ in ids)
        if tries > MAX_TRIES:
            log.error("message %s/%s crashed its answer %d times; marked failed",
                      msg.platform, msg.message_id, tries - 1)
            for id_ in ids:
                self.ledger.fail(msg.platform, msg.chat_id, id_, f"gave up after {tries - 1} tries")
            reply = Reply(GAVE_UP.format(tries - 1), "failed", run_id_for(msg))
            await self.outbox.deliver(msg.platform, msg.chat_id, msg.message_id, reply.text)
            self._discard(msg)  # set aside: its files are not needed any more
            return reply
        msg = replace(msg, text=storable(msg.text), user_name=storable(msg.user_name))
        if len(ids) > 1:  # before the run: after a crash the same lines are one turn again
            self.ledger.join_run(msg.platform, msg.chat_id, ids, run_id_for(msg))
        deadline = asyncio.timeout(self.settings.answer_deadline)
        try:
            with in_chat(msg.platform, msg.chat_id):  # its model calls: this chat's /model
                async with deadline, self._showing(msg) as live:  # stopped before delivery
                    self.turns.showing(run_id_for(msg), live)
                    reply = await self._answer(msg, is_owner,
                                               {"messages": ids} if ids[1:] else {})
        except asyncio.CancelledError:  # a clean stop (SIGTERM): the messages stay open, and
            for id_ in ids:  # are not poison
                self.ledger.give_back(msg.platform, msg.chat_id, id_)
            raise
        except Exception as exc:
            reply = self._failed(msg, exc, deadline.expired())
        await self.outbox.deliver(msg.platform, msg.chat_id, msg.message_id, reply.text,
                                  reply.buttons, file=reply.file)
        status = "failed" if reply.route == "failed" else "answered"
        self.ledger.finish_all(msg.platform, msg.chat_id, ids, status, reply.route)
        self._discard(msg)
        if reply.route not in {"command", "failed"}:
            self.memory.add_history(history_key(msg), "assistant", reply.text)
        return reply

    def _showing(self, msg: IncomingMessage) -> contextlib.AbstractAsyncContextManager[Any]:
        """The answer to ``msg`` shown in its chat as it is written (FRONTDESK_STREAM)."""
        if self.live is None:
            return contextlib.nullcontext()
        return self.live.showing(msg.platform, msg.chat_id, msg.message_id, msg.is_private)

    def _discard(self, msg: IncomingMessage) -> None:
        """The message is answered: its files (if it had any) are not needed any more."""
        if msg.attachments:
            self.files.discard(msg)

    def _open_wait(self, msg: IncomingMessage, open_waits: list[WaitInfo]) -> WaitInfo | None:
        """The oldest of ``open_waits`` asked by a run started from this message's chat."""
        mine = self.ledger.runs_of_chat(msg.platform, msg.chat_id) if open_waits else set()
        return next((wait for wait in open_waits if wait.run_id in mine), None)

    def _failed(self, msg: IncomingMessage, exc: Exception, past_deadline: bool) -> Reply:
        """The visible answer to a message whose work failed, or ran past its deadline (then
        its run ends as failed with reason ``deadline`` and the chat is free again)."""
        run_id = run_id_for(msg)
        if past_deadline and isinstance(exc, TimeoutError):
            log.warning("message %s/%s stopped at its deadline (%.0f s)", msg.platform,
                        msg.message_id, self.settings.answer_deadline)
            self.runs.fail(run_id, "deadline")
            return Reply(TOO_SLOW, "failed", run_id)
        log.error("message %s/%s failed", msg.platform, msg.message_id, exc_info=exc)
        return Reply(FAILURE, "failed", run_id)

    async def _answer(self, msg: IncomingMessage, is_owner: bool,
                      burst: dict[str, Any]) -> Reply:
        if len(msg.text) > MAX_MESSAGE_CHARS:  # refused before any model is paid to read it
            return Reply(TOO_LONG.format(len(msg.text)), "refused")
        if msg.attachments:  # files become text and images first (bot.media.attachments)
            prepared = await self.files.prepare(msg, self.outbox.adapter(msg.platform))
            if prepared.answer is not None:
                return Reply(prepared.answer, prepared.route)
            reply = await self._answer_text(replace(msg, text=storable(prepared.text)),
                                            is_owner, prepared.state())
            return replace(reply, text=prepared.framed(reply.text, msg.platform))
        return await self._answer_text(msg, is_owner, burst)

    async def _answer_text(self, msg: IncomingMessage, is_owner: bool,
                           extra: dict[str, Any]) -> Reply:
        command = parse(msg.text)
        if command is not None:
            return await self._command(msg, command, is_owner)
        typed = None if is_owner else await self.decisions.answer_typed(
            msg.platform, msg.chat_id, msg.user_id, msg.message_id, msg.text)
        if typed is not None:  # a guest's typed pick of their own offer ("the second one")
            return typed
        open_waits = self.store.waits("open") if is_owner else []  # read once for both
        waiting = self._open_wait(msg, open_waits) if is_owner else None
        answer = match_option(waiting, msg.text) if waiting is not None else None
        if waiting is not None and answer is not None:
            return await self._answer_wait(waiting, answer, scope_of(msg, is_owner))
        relayed = relayed_wait(self.ledger, open_waits, msg.platform, msg.chat_id) \
            if is_owner and waiting is None else None
        answer = match_option(relayed, msg.text) if relayed is not None else None
        if relayed is not None and answer is not None:  # a guest's tool call, typed: a press
            token = self.ledger.button_token(relayed.run_id, relayed.key, answer, answer)
            pressed = await self.press(msg.platform, msg.user_id, token)
            return Reply(pressed.edit_text or pressed.alert, "command", relayed.run_id)
        state = await self._run(msg, self.chat_workflow,
                                lambda: self._message_input(msg, is_owner, extra))
        if not is_owner and state.status == "waiting" and state.waits:  # a tool approval
            text = await ask_owner(self.notifier, self.outbox, msg.platform,
                                   state.run_id or "", state.waits[0], self.decisions.buttons)
            return replace(self.decisions.reply_from(state, default_route="loop"), text=text,
                           buttons=[])
        return self.decisions.reply_from(state, default_route="loop")

    def _message_input(self, msg: IncomingMessage, is_owner: bool,
                       extra: dict[str, Any]) -> dict[str, Any]:
        """A new run's input: the text, who sent it, the chat so far (which it then joins),
        and what its files added (``caption``, ``images``) or the ids of a burst's lines."""
        told = self.turns.told(msg, extra.get("messages", ()))  # by a turn that gave way
        history, line = chat_so_far(self.memory, history_key(msg), msg.text, told, 10)
        self.memory.add_history(history_key(msg), "user", line)
        return {"text": msg.text, "sender": sender_of(msg, is_owner), "history": history,
                **extra}

    async def _run(self, msg: IncomingMessage, workflow: AnyWorkflow,
                   make_input: Callable[[], dict[str, Any]]) -> RunResult:
        """Start this message's run, or take up the one a crash interrupted."""
        run_id = run_id_for(msg)
        self.ledger.set_run(msg.platform, msg.chat_id, msg.message_id, run_id)
        return await self._start(workflow, make_input, run_id, msg.platform, msg.chat_id)

    async def _start(self, workflow: AnyWorkflow, make_input: Callable[[], dict[str, Any]],
                     run_id: str, platform: str, chat_id: str) -> RunResult:
        """Run ``run_id`` of a workflow in a chat, or take it as it stands (never a second:
        its input, and what building it records, is made only for a new run)."""
        if self.store.run(run_id) is not None:  # recovered at ``start``: its input is not
            return self.runs.load(run_id)     # built again (that would record it twice)
        state = make_input()
        self.ledger.file_run(run_id, platform, chat_id)
        meta = {"platform": platform, "chat_id": chat_id, "user": state["sender"]["scope"],
                "name": state["sender"].get("name", ""),
                "words": first_words(str(state.get("text") or state.get("brief") or "")),
                **({"messages": state["messages"]} if "messages" in state else {})}
        return await self.runs.start(workflow, state, run_id=run_id, meta=meta,
                                     observer=self.turns.observer(run_id))

    async def _command(self, msg: IncomingMessage, command: Command, is_owner: bool) -> Reply:
        started = WORKFLOW_COMMANDS.get(command.name)
        if started is not None:
            return await self._workflow_command(msg, started, command.argument, is_owner)
        if command.name == "meetings" and self.meetings is not None:
            return self.meetings.listing(scope_of(msg, is_owner), is_owner)
        text = await self.commands.handle(command, scope_of(msg, is_owner),
                                          lambda: self._cancel(msg, is_owner),
                                          where=(msg.platform, msg.chat_id), is_owner=is_owner)
        return Reply(text or "", "command")

    async def _workflow_command(self, msg: IncomingMessage, command: WorkflowCommand,
                                argument: str, is_owner: bool) -> Reply:
        """/draft, /brief, …: the owner check, the argument, then the workflow's run."""
        if command.owner_only and not is_owner:
            return Reply(NOT_OWNER, "command")
        if command.argument and command.argument_required and not argument:
            return Reply(command.missing_argument, "command")

        def make_input() -> dict[str, Any]:
            sender = sender_of(msg, is_owner)
            return command.input(CommandRequest(argument, sender, self.today()))

        state = await self._run(msg, self.workflows[command.workflow], make_input)
        return await self.decisions.outcome(state, default_route="command")

    async def brief(self, platform: str, chat_id: str, run_id: str) -> Reply:
        """The morning briefing (a code workflow) in this chat, or run ``run_id`` as it stands."""
        state = await self._start(self.workflows["brief"],
                                  lambda: briefing_input(self.today(), platform, chat_id),
                                  run_id, platform, chat_id)
        return self.decisions.reply_from(state, default_route="command")

    async def scheduled_brief(self, day: str) -> None:
        """FRONTDESK_BRIEF_AT's briefing of ``day``, in the owner's chat (once per day)."""
        platform = self.notifier.targets("")[0]
        chat = await self.notifier.owner_chat(platform)
        async with self.locks.of(platform, chat):
            reply = await self.brief(platform, chat, f"brief-{day}")
            await self.outbox.deliver(platform, chat, f"brief-{day}", reply.text, reply.buttons)

    async def _cancel(self, msg: IncomingMessage, is_owner: bool) -> str:
        if not is_owner:  # the waiting runs are the owner's (a group chat has guests too)
            return NOT_OWNER
        waiting = self._open_wait(msg, self.store.waits("open"))
        if waiting is None:
            return "Nothing is waiting in this chat."
        self.runs.cancel(waiting.run_id, by="owner")
        return "Cancelled the waiting run."

    async def _answer_wait(self, wait: WaitInfo, answer: str, by: str) -> Reply:
        state = await self.runs.resume(wait.run_id, answer, by, key=wait.key)
        return self.decisions.reply_from(state, default_route="command")

    # -- the owner's decisions (bot.chat.decisions) ---------------------------------------
    def buttons(self, run_id: str, wait: dict[str, Any]) -> list[Button]:
        """One opaque token per option of a wait."""
        return self.decisions.buttons(run_id, wait)

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

    async def queue_owed_outcomes(self, since: float) -> int:
        """Queue each press's outcome a crash kept from being queued; how many were owed."""
        return await self.decisions.queue_owed_outcomes(since)

    async def expire(self, now: float | None = None) -> int:
        """Follow ``on_expiry`` for every wait past its time and tell its chat; how many."""
        return await self.decisions.expire(now)
