"""The chat concern, built: the gateway, its handlers in order, the owner's decisions.

``build`` is what the assembler (``bot.app``) calls, with the other concerns' bundles: it makes
the handlers list (``bot.chat.handlers``: what happens to a message, in order), the turn's
answerer, the decisions on presses (each button kind's handler), the briefing, the meetings'
chat side (and its ``propose_meeting`` / ``move_meeting`` tools), and the gateway over them,
whose ``start`` recovers runs and queues what a crash owed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.access.build import Admission
from bot.access.pairing import KIND as PAIRING_KIND
from bot.access.pairing import PAIRING_RUN
from bot.calendar.owner import OwnerCalendar
from bot.chat.answering import Answerer
from bot.chat.briefing import Briefing
from bot.chat.bursts import Bursts
from bot.chat.chat_runs import ChatRunner
from bot.chat.commands import CommandHandler
from bot.chat.decisions import Decisions, PressKinds, WaitRules, decided, owner_presses
from bot.chat.drafts import KIND as DRAFT_KIND
from bot.chat.drafts import OwnerDrafts
from bot.chat.gateway import Gateway
from bot.chat.guest_limits import GuestCaps, GuestLimits, limit_graph
from bot.chat.handlers import (
    ChatCommands,
    Handler,
    MeetingsListing,
    NewRun,
    TypedPicks,
    WaitAnswers,
    WorkflowCommands,
)
from bot.chat.held import HeldTurns
from bot.chat.locks import ChatLocks
from bot.chat.meetings import CANCEL, MeetingChat
from bot.chat.meetings import KIND as MEETING_KIND
from bot.chat.model_command import ModelCommand
from bot.chat.timezones import PersonZones, TimeZones
from bot.chat.turns import Turns
from bot.config.settings import Settings
from bot.delivery.build import Delivery
from bot.meetings.build import Meetings
from bot.meetings.tool import meeting_tool, move_tool
from bot.models.build import ChatModels
from bot.models.costs import SpendLog
from bot.reminders.build import ReminderParts
from bot.tools.build import Tools
from bot.workflows.build import Flows
from graphs.trace import prune
from graphs.workflows import meeting
from memory.notes import Memory

if TYPE_CHECKING:  # the pipeline is imported on the first message with files
    from bot.media.attachments import Attachments

OWED_WINDOW_S = 7 * 24 * 3600.0  # presses this recent are checked for an unqueued outcome


@dataclass(frozen=True)
class Chat:
    """The message path: the gateway and what it hands turns and presses to."""

    gateway: Gateway
    answerer: Answerer  # one turn answered (the handlers, the outbox)
    decisions: Decisions  # presses, owed outcomes, expiries
    briefing: Briefing  # the morning briefing (FRONTDESK_BRIEF_AT)
    meetings: MeetingChat  # /meetings, propose_meeting, a booking's buttons


def build(settings: Settings, memory: Memory, delivery: Delivery, admission: Admission,
          models: ChatModels, tools: Tools, flows: Flows, meetings: Meetings,
          reminders: ReminderParts, owner: OwnerCalendar, *,
          clock: Callable[[], float] = time.time) -> Chat:
    """The chat layer over the other concerns (``clock``: what "upcoming" is measured by)."""
    locks = ChatLocks()  # one thing at a time per chat: a message, a press
    runner = ChatRunner(flows.runs, flows.store, delivery.run_chats, delivery.inbox)
    meetings.desk.zones = PersonZones(admission.people)  # each guest's zone, for their times
    if meetings.desk.aftercare is not None:  # the reminders' times too
        meetings.desk.aftercare.zones = meetings.desk.zones
    meeting_chat = MeetingChat(store=meetings.store, desk=meetings.desk,
                               buttons=delivery.buttons, outbox=delivery.outbox,
                               runner=runner, access=admission.access, clock=clock,
                               owner_place=delivery.notifier.owner_place)
    if "propose_meeting" not in tools.registry.names():
        tools.registry.register(meeting_tool(meeting_chat.propose))
        tools.registry.register(move_tool(meeting_chat.move))
    drafts = OwnerDrafts(drafts=delivery.drafts, buttons=delivery.buttons,
                         outbox=delivery.outbox, notifier=delivery.notifier,
                         access=admission.access, locks=locks)  # replies the owner approves
    decisions = build_decisions(delivery, admission, flows, meeting_chat, locks, drafts)
    turns = Turns(Bursts(settings.merge_window), locks, delivery.inbox, flows.store,
                  flows.runs)  # a lone line answered at once, the lines of a burst as one
    workflows = {w.name: w for w in (flows.triage, flows.loop, flows.content, flows.brief,
                                     meetings.flow)}
    commands = CommandHandler(memory, reminders.store, ModelCommand(models.big,
                                                                    models.small.name))
    caps = GuestCaps(settings.guest_messages_per_hour, settings.guest_daily_usd,
                     ZoneInfo(settings.timezone) if settings.timezone else None)
    limited = flows.runs.register(limit_graph())  # found again when a crash interrupted one
    # first, before files are read: a guest past their share starts nothing that is paid for
    gates: list[Handler] = [GuestLimits(caps, runner, flows.store, memory, limited)]
    handlers: list[Handler] = [
        WorkflowCommands(runner, workflows, decisions, owner.today),
        MeetingsListing(meeting_chat),
        TimeZones(admission.people, settings.timezone),  # before a typed pick: UTC+2 is a zone
        ChatCommands(commands, flows.store, flows.runs, delivery.run_chats),
        TypedPicks(decisions),
        WaitAnswers(flows.store, flows.runs, delivery.run_chats, delivery.outbox,
                    delivery.buttons, decisions),
        NewRun(flows.chat, runner, memory, decisions, delivery.notifier, delivery.outbox,
               turns, meeting_chat.offer_for)]
    held = HeldTurns(delivery.disk, delivery.inbox, locks)  # what a full disk stopped
    answerer = Answerer(inbox=delivery.inbox, outbox=delivery.outbox, handlers=handlers,
                        memory=memory, runs=flows.runs, deadline=settings.answer_deadline,
                        make_files=lambda: attachments_for(settings, models.spend_log),
                        live=delivery.live, turns=turns, held=held, gates=gates,
                        drafts=drafts)
    delivery.disk.on_room(lambda: held.answer_all(answerer.answer))

    async def prune_traces() -> None:
        prune(settings.traces_dir, settings.trace_days)

    async def queue_owed() -> None:
        await decisions.queue_owed_outcomes(time.time() - OWED_WINDOW_S)
        await drafts.queue_owed()

    gateway = Gateway(
        access=admission.access, inbox=delivery.inbox, outbox=delivery.outbox,
        strangers=admission.strangers, answerer=answerer, decisions=decisions, locks=locks,
        turns=turns,
        on_start=[prune_traces, tools.mcp.start, flows.runs.recover, queue_owed,
                  delivery.notifier.resume, admission.strangers.resume, decisions.expire],
        disk=delivery.disk)
    briefing = Briefing(flows.brief, runner, decisions, delivery.notifier, delivery.outbox,
                        locks, owner.today)
    return Chat(gateway, answerer, decisions, briefing, meeting_chat)


def build_decisions(delivery: Delivery, admission: Admission, flows: Flows,
                    meeting_chat: MeetingChat, locks: ChatLocks,
                    drafts: OwnerDrafts) -> Decisions:
    """The owner's decisions, with the meeting's guest and relayed waits and the handlers of
    the button kinds that have no run's wait behind them."""
    rules = WaitRules(
        guest_nodes=frozenset(("meeting", node) for node in meeting.GUEST_NODES),
        owner_nodes=frozenset(("meeting", node) for node in meeting.OWNER_NODES))
    kinds = PressKinds(
        handlers={PAIRING_KIND: owner_presses(admission.access, admission.strangers),
                  MEETING_KIND: decided(meeting_chat.press), DRAFT_KIND: drafts.press},
        legacy_prefixes={PAIRING_RUN: PAIRING_KIND, CANCEL: MEETING_KIND})
    return Decisions(buttons=delivery.buttons, cursors=delivery.cursors,
                     run_chats=delivery.run_chats, outbox=delivery.outbox, store=flows.store,
                     runs=flows.runs, access=admission.access, locks=locks,
                     notifier=delivery.notifier, rules=rules, kinds=kinds)


def attachments_for(settings: Settings, spend_log: SpendLog) -> Attachments:
    """The attachments pipeline (images, PDFs, voice), imported when first needed; voice
    transcription is held against the budget in the process's spend log."""
    from bot.media.attachments import Attachments

    return Attachments.from_settings(settings, spend_log)
