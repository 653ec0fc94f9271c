"""What happens to a message: an ordered list of handlers, each taking a turn or passing it on.

As python-telegram-bot's ``Application`` holds its handlers, the gateway holds a list built by
the assembler (``bot.chat.build``): it asks each in order, and the first that takes the turn
answers it. In order: a guest past their share of messages or spend (``GuestLimits``, in
``bot.chat.guest_limits``), a workflow command (/draft, /brief, /meet: ``WorkflowCommands``),
the bookings list (``MeetingsListing``), a time zone given (``/timezone``, "I'm in Tokyo":
``bot.chat.timezones.TimeZones``), any other chat command (``ChatCommands``), a guest's
typed pick of their own offer (``TypedPicks``), the owner's typed answer to a run waiting in
this chat (``WaitAnswers``), and last a new run of the chat's workflow (``NewRun``), which
takes every turn. A new way into the bot is a new handler in that list, not another ``if``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.chat.answers import match_option
from bot.chat.approval_relay import ask_owner, relayed_wait
from bot.chat.chat_runs import AnyWorkflow, ChatRunner
from bot.chat.commands import CommandHandler, parse
from bot.chat.decisions import NOT_OWNER, Decisions
from bot.chat.meetings import MeetingChat
from bot.chat.senders import history_key, run_id_for, scope_of, sender_of
from bot.chat.turns import Turns, chat_so_far
from bot.chat.workflow_commands import WORKFLOW_COMMANDS, CommandRequest
from bot.delivery.buttons import Buttons
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.delivery.run_chats import RunChats
from bot.messages import WITHOUT_BUTTONS, IncomingMessage, Reply
from graphs.graph import TextSink
from graphs.runs import Runs, RunStore, WaitInfo
from memory.notes import Memory

Offers = Callable[[str, str, str], "str | None"]  # (platform, chat, message) -> the offer


@dataclass(frozen=True)
class Turn:
    """One turn to answer: its message (a burst's lines as one), who sent it, and what its
    files added to a new run's input (``caption``, ``images``) or a burst's message ids."""

    message: IncomingMessage
    is_owner: bool
    extra: Mapping[str, Any]
    live: TextSink | None = None  # where its answer is shown as it is written, if anywhere

    @property
    def scope(self) -> str:
        """Whose notes and reminders: the owner's, else this person's."""
        return scope_of(self.message, self.is_owner)


class Handler(Protocol):
    """One way a message can be answered."""

    async def answer(self, turn: Turn) -> Reply | None:
        """The reply when this handler takes the turn; None passes it to the next one."""
        ...


def chat_wait(run_chats: RunChats, msg: IncomingMessage,
              open_waits: list[WaitInfo]) -> WaitInfo | None:
    """The oldest of ``open_waits`` asked by a run started from this message's chat."""
    mine = run_chats.of_chat(msg.platform, msg.chat_id) if open_waits else set()
    return next((wait for wait in open_waits if wait.run_id in mine), None)


class WorkflowCommands:
    """/draft, /brief, /meet, …: the owner check, the argument, then the workflow's run."""

    def __init__(self, runner: ChatRunner, workflows: Mapping[str, AnyWorkflow],
                 decisions: Decisions, today: Callable[[], str]) -> None:
        self.runner = runner
        self.workflows = workflows
        self.decisions = decisions
        self.today = today  # the owner's ISO date

    async def answer(self, turn: Turn) -> Reply | None:
        command = parse(turn.message.text)
        declared = WORKFLOW_COMMANDS.get(command.name) if command is not None else None
        if command is None or declared is None:
            return None
        if declared.owner_only and not turn.is_owner:
            return Reply(NOT_OWNER, "command")
        if declared.argument and declared.argument_required and not command.argument:
            return Reply(declared.missing_argument, "command")
        msg = turn.message

        def make_input() -> dict[str, Any]:
            sender = sender_of(msg, turn.is_owner)
            return declared.input(CommandRequest(command.argument, sender, self.today()))

        state = await self.runner.start(self.workflows[declared.workflow], make_input,
                                        run_id_for(msg), msg.platform, msg.chat_id,
                                        live=turn.live, message_id=msg.message_id)
        return await self.decisions.outcome(state, default_route="command")


class MeetingsListing:
    """/meetings: the person's upcoming bookings, each with its Cancel button."""

    def __init__(self, meetings: MeetingChat) -> None:
        self.meetings = meetings

    async def answer(self, turn: Turn) -> Reply | None:
        command = parse(turn.message.text)
        if command is None or command.name != "meetings":
            return None
        return self.meetings.listing(turn.scope, turn.is_owner)


class ChatCommands:
    """Every other chat command (/help, /notes, /cancel, /model, …), unknown ones included."""

    def __init__(self, commands: CommandHandler, store: RunStore, runs: Runs,
                 run_chats: RunChats) -> None:
        self.commands = commands
        self.store = store
        self.runs = runs
        self.run_chats = run_chats

    async def answer(self, turn: Turn) -> Reply | None:
        command = parse(turn.message.text)
        if command is None:
            return None
        msg = turn.message
        text = await self.commands.handle(command, turn.scope, lambda: self.cancel(turn),
                                          where=(msg.platform, msg.chat_id),
                                          is_owner=turn.is_owner)
        return Reply(text or "", "command")

    async def cancel(self, turn: Turn) -> str:
        """/cancel: the run waiting in this chat (the waiting runs are the owner's)."""
        if not turn.is_owner:
            return NOT_OWNER
        waiting = chat_wait(self.run_chats, turn.message, self.store.waits("open"))
        if waiting is None:
            return "Nothing is waiting in this chat."
        self.runs.cancel(waiting.run_id, by="owner")
        return "Cancelled the waiting run."


class TypedPicks:
    """A guest's typed pick of their own offer ("the second one"): taken as their press."""

    def __init__(self, decisions: Decisions) -> None:
        self.decisions = decisions

    async def answer(self, turn: Turn) -> Reply | None:
        if turn.is_owner:
            return None
        msg = turn.message
        return await self.decisions.answer_typed(msg.platform, msg.chat_id, msg.user_id,
                                                 msg.message_id, msg.text)


class WaitAnswers:
    """The owner's typed answer ("approve") to a run waiting in this chat, or to a guest's
    question relayed to it (then taken as the press of that option's button)."""

    def __init__(self, store: RunStore, runs: Runs, run_chats: RunChats, outbox: Outbox,
                 buttons: Buttons, decisions: Decisions) -> None:
        self.store = store
        self.runs = runs
        self.run_chats = run_chats
        self.outbox = outbox
        self.buttons = buttons
        self.decisions = decisions

    async def answer(self, turn: Turn) -> Reply | None:
        if not turn.is_owner:
            return None
        msg = turn.message
        open_waits = self.store.waits("open")  # read once for both
        waiting = chat_wait(self.run_chats, msg, open_waits)
        if waiting is not None:
            answer = match_option(waiting, msg.text)
            if answer is None:
                return None
            state = await self.runs.resume(waiting.run_id, answer, turn.scope, key=waiting.key,
                                           live=turn.live)
            return self.decisions.reply_from(state, default_route="command")
        relayed = relayed_wait(self.outbox, open_waits, msg.platform, msg.chat_id)
        answer = match_option(relayed, msg.text) if relayed is not None else None
        if relayed is None or answer is None:
            return None
        token = self.buttons.issue("run", relayed.run_id, relayed.key, answer, answer)
        pressed = await self.decisions.press(msg.platform, msg.user_id, token)
        return Reply(pressed.result.edit_text or pressed.result.alert, "command",
                     relayed.run_id)


class NewRun:
    """Every other message: a run of the chat's workflow (triage, or the plain agent loop
    with graph mode off) with the chat so far; a guest's tool approval goes to the owner."""

    def __init__(self, workflow: AnyWorkflow, runner: ChatRunner, memory: Memory,
                 decisions: Decisions, notifier: OwnerNotifier, outbox: Outbox,
                 turns: Turns, offers: Offers | None = None) -> None:
        """``offers``: the offer a run's ``propose_meeting`` made on a platform without
        buttons (``MeetingChat.offer_for``), which is then the run's one reply."""
        self.workflow = workflow
        self.offers = offers
        self.turns = turns  # a lone line's run may give way to its burst
        self.runner = runner
        self.memory = memory
        self.decisions = decisions
        self.notifier = notifier
        self.outbox = outbox

    async def answer(self, turn: Turn) -> Reply | None:
        msg = turn.message
        run_id = run_id_for(msg)
        state = await self.runner.start(self.workflow, lambda: self.input(turn), run_id,
                                        msg.platform, msg.chat_id, live=turn.live,
                                        observer=self.turns.observer(run_id),
                                        message_id=msg.message_id)
        reply = self.decisions.reply_from(state, default_route="loop")
        offer = self.offers(msg.platform, msg.chat_id, msg.message_id) \
            if self.offers is not None and msg.platform in WITHOUT_BUTTONS \
            and state.status == "completed" else None
        if offer is not None:  # a mail: the times numbered, in place of the model's words
            return replace(reply, text=offer, buttons=[])
        if not turn.is_owner and state.status == "waiting" and state.waits:  # a tool approval
            text = await ask_owner(self.notifier, self.outbox, msg.platform,
                                   state.run_id or "", state.waits[0], self.decisions.buttons)
            return replace(reply, text=text, buttons=[])
        return reply

    def input(self, turn: Turn) -> dict[str, Any]:
        """A new run's input: the text, who sent it, the chat so far (which it then joins),
        and what its files added or the ids of a burst's lines."""
        msg = turn.message
        told = self.turns.told(msg, turn.extra.get("messages", ()))  # by a turn that gave way
        history, line = chat_so_far(self.memory, history_key(msg), msg.text, told, 10)
        self.memory.add_history(history_key(msg), "user", line)
        return {"text": msg.text, "sender": sender_of(msg, turn.is_owner),
                "history": history, **turn.extra}
