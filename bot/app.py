"""The assembler: every long-lived object of Frontdesk, built once from the settings and wired.

``assemble(settings)`` opens the database (``bot.schema.open_database``: one writer and one
reader connection, the migrations applied) and builds each part over it, handing it only the
collaborators it uses: the ledger and outbox, memory, the owner's calendar, models, tools, the
workflows (given their services here, which is how ``graphs/`` stays free of ``bot/``
imports), the run layer, the reminders and their timer, the owner's decisions and the
gateway. Nothing receives the result: the CLI commands start what they need of it (``frontdesk
run`` the gateway, the adapters and the timer). What serving a message does not need is not
loaded here: the attachments pipeline is built on the first message with files, the MCP client
only when a servers file is configured, the dashboard only when its port is set.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.access.allowlist import Access
from bot.access.pairing import KIND as PAIRING_KIND
from bot.access.pairing import PAIRING_RUN, Strangers
from bot.access.people import People
from bot.calendar.events import EventSource
from bot.calendar.ics import Calendar
from bot.calendar.owner import OwnerCalendar
from bot.calendar.writer import BusyTime, CalendarWriter
from bot.chat.answering import Answerer
from bot.chat.briefing import Briefing
from bot.chat.bursts import Bursts
from bot.chat.chat_runs import AnyWorkflow, ChatRunner
from bot.chat.commands import CommandHandler
from bot.chat.decisions import Decisions, PressKinds, WaitRules, decided, owner_presses
from bot.chat.gateway import Gateway
from bot.chat.handlers import (
    ChatCommands,
    Handler,
    MeetingsListing,
    NewRun,
    TypedPicks,
    WaitAnswers,
    WorkflowCommands,
)
from bot.chat.locks import ChatLocks
from bot.chat.meetings import CANCEL, MeetingChat
from bot.chat.meetings import KIND as MEETING_KIND
from bot.chat.model_command import ModelCommand
from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.delivery.cursors import Cursors
from bot.delivery.files import OutboxFiles
from bot.delivery.inbox import Inbox
from bot.delivery.ledger import ledger_stores
from bot.delivery.live import LiveReplies
from bot.delivery.notifier import NoticeLog, OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.delivery.parts import OutboxParts
from bot.delivery.shown import LiveMessages
from bot.meetings.desk import MeetingDesk
from bot.meetings.slots import MeetingRules
from bot.meetings.store import MeetingStore
from bot.meetings.tool import meeting_tool, move_tool
from bot.messages import OutgoingFile
from bot.models import Models, build_models, classify_offline, model_maker
from bot.models.choices import ChatBigModel, ModelChoices
from bot.models.costs import SpendLog
from bot.reminders.store import Reminders
from bot.reminders.timer import Scheduler, SchedulerDeps, build_scheduler
from bot.reminders.tool import reminder_tool
from bot.reminders.wakeup import Wakeup
from bot.schema import open_database
from bot.tools.builtin import build_fact_tools, build_tools, build_writing_tools
from bot.tools.loop import run_loop
from bot.tools.registry import ToolRegistry, caller_from_sender
from bot.tools.servers import McpServers
from graphs import END, START, Graph, Node
from graphs.agent_nodes import agent_node
from graphs.codefirst import Workflow
from graphs.runs import GraphWorkflow, Runs, RunStore
from graphs.trace import prune
from graphs.workflows import brief as brief_flow
from graphs.workflows import content, meeting, triage
from memory.notes import Memory
from sqlitedb.database import Database

if TYPE_CHECKING:
    from bot.media.attachments import Attachments

# Shipped inside the package (package data), so a wheel installed by pip, pipx or uv has them.
OWED_WINDOW_S = 7 * 24 * 3600.0  # presses this recent are checked for an unqueued outcome
PROMPTS_DIR: Traversable = files("bot.config") / "prompts"


def load_prompts(overrides: Path | None = None, *,
                 shipped: Traversable = PROMPTS_DIR) -> dict[str, str]:
    """Every shipped ``*.txt`` prompt by its stem; a file of the same name in ``overrides``
    (``FRONTDESK_HOME/prompts``) replaces the shipped one, and a new name there adds a prompt."""
    texts = {entry.name.removesuffix(".txt"): entry.read_text(encoding="utf-8").strip()
             for entry in shipped.iterdir() if entry.name.endswith(".txt")}
    if overrides is not None and overrides.is_dir():
        texts.update({path.stem: path.read_text(encoding="utf-8").strip()
                      for path in sorted(overrides.glob("*.txt"))})
    return texts


@dataclass(frozen=True)
class App:
    """What ``assemble`` built; the CLI commands (and the tests) start what they need of it."""

    settings: Settings
    db: Database  # frontdesk.db's writer and reader, under every store below
    inbox: Inbox  # every message, recorded before any work
    parts: OutboxParts  # every reply's parts, before they are sent
    buttons: Buttons  # the buttons' tokens
    cursors: Cursors  # where each adapter keeps its place
    outbox: Outbox  # the one the gateway and the owner notifier send through
    memory: Memory
    store: RunStore
    runs: Runs  # the durable rules over ``store`` and the workflows
    models: Models  # the big one is each chat's /model choice (``ChatBigModel``)
    model_choices: ModelChoices  # which preset each chat chose
    spend_log: SpendLog  # each model call's cost, and today's spend
    owner: OwnerCalendar  # the owner's zone, today, calendar (and CalDAV writer, when set)
    access: Access
    people: People
    notifier: OwnerNotifier
    tools: ToolRegistry
    mcp: McpServers  # started by the gateway's ``start``
    prompts: dict[str, str]
    triage: Graph
    loop_graph: Graph
    content: Graph
    brief: Workflow
    meeting: Graph
    meetings: MeetingStore  # the meeting requests and bookings
    reminders: Reminders
    wakeup: Wakeup  # tells a running bot's timer of reminders set by another process
    gateway: Gateway
    briefing: Briefing  # the morning briefing (FRONTDESK_BRIEF_AT, /brief)
    answerer: Answerer  # one turn answered (the handlers, the outbox)
    decisions: Decisions  # presses, owed outcomes, expiries
    scheduler: Scheduler  # fires reminders; ``frontdesk run`` starts it

    @property
    def calendar(self) -> EventSource | None:
        """The owner's calendar, if one is configured."""
        return self.owner.calendar

    async def close(self) -> None:
        """Stop what the process started beside the gateway: the wake-up socket, MCP servers
        (the database stays open: ``db.close()`` when nothing will write any more)."""
        await self.wakeup.close()
        await self.mcp.stop()


def assemble(settings: Settings, *, models: Models | None = None,
             calendar: Calendar | None = None, clock: Callable[[], float] = time.time,
             sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
             meeting_writer: CalendarWriter | None = None,
             meeting_busy: BusyTime | None = None) -> App:
    """Open the database and build every part (no network is touched here).

    ``models`` and ``calendar`` replace the configured ones; ``clock`` and ``sleep`` pace the
    owner notifier's and the pairing prompts' hourly limits and the meetings' retries (tests
    pass fakes); ``meeting_writer`` / ``meeting_busy`` are the calendar the meetings book in
    and read busy time from (default: none to write, busy time from the ``.ics``).
    """
    settings.traces_dir.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.database)  # the process's two connections, every store's
    memory = Memory(db)
    if calendar is None and settings.calendar:
        calendar = Calendar(settings.calendar, tz=settings.timezone,
                            cache_dir=settings.home / "cache")
    owner = OwnerCalendar.build(settings, calendar)  # + the CalDAV copy, when configured
    ledger = ledger_stores(db)
    shown = LiveMessages(db)  # live replies' partial messages
    outbox = Outbox(ledger.parts, shown, OutboxFiles(db))  # + replies' files
    live = LiveReplies(outbox.adapter, shown, on=settings.stream,
                       interval=settings.stream_interval)
    notifier = OwnerNotifier(settings, outbox, NoticeLog(db), clock=clock, sleep=sleep)
    people = People(db)
    access = Access(settings, people)
    spend_log = SpendLog.open(settings, db)
    models = models or build_models(settings, spend_log=spend_log)
    model_choices = ModelChoices(db, settings.model_presets)
    big = ChatBigModel(models.big, model_choices, model_maker(settings, spend_log=spend_log))
    models = Models(small=models.small, big=big)  # each chat's /model choice, per call
    prompts = load_prompts(settings.home / "prompts")
    tools = build_tools(memory, owner.calendar, notifier.notify)
    mcp = McpServers(settings.mcp_config, settings.home, settings.mcp_timeout, tools)

    async def notify_from_sender(sender: dict[str, Any], text: str) -> str:
        """triage's notify_now: the sender dict becomes a caller."""
        return await notifier.notify(caller_from_sender(sender), text)

    def note_texts(scope: str, query: str, k: int) -> list[str]:
        """Memory hits for the agent's context, in the caller's own scope."""
        return [hit.text for hit in memory.search(scope, query, k)]

    triage_graph = triage.build(triage.TriageDeps(
        small=models.small, big=models.big, loop=run_loop, tools=tools,
        make_caller=caller_from_sender, search_notes=note_texts, read_calendar=owner.context,
        notify_owner=notify_from_sender, fallback_classify=classify_offline, prompts=prompts,
        has_calendar=owner.calendar is not None))
    loop_graph = build_loop_graph(models.big, tools, prompts["loop"])
    content_graph = content.build(content.ContentDeps(
        small=models.small, big=models.big, loop=run_loop,
        writing_tools=build_writing_tools(memory), facts_tools=build_fact_tools(memory),
        make_caller=caller_from_sender, save_note=memory.add, prompts=prompts,
        max_words=settings.draft_max_words))
    brief = brief_flow.build(brief_flow.BriefDeps(
        small=models.small, big=models.big, loop=run_loop,
        notes_tools=build_fact_tools(memory), make_caller=caller_from_sender,
        read_agenda=owner.agenda_for, save_note=memory.add, prompts=prompts))
    meetings = MeetingStore(db, clock=clock)

    async def tell_owner(origin: str, key: str, text: str,
                         file: OutgoingFile | None = None) -> None:
        """A meeting's notice to the owner (with a file: the event's .ics), once per key."""
        platform = notifier.targets(origin)[0]
        await outbox.deliver(platform, await notifier.owner_chat(platform), key, text,
                             file=file)

    rules = MeetingRules.from_settings(settings, owner.zone())
    # Busy time from the owner's calendar (the CalDAV copy merged with the .ics, TRANSP
    # honoured); bookings are written to CalDAV when it is configured (else the owner adds
    # the event's .ics by hand).
    desk = MeetingDesk(meetings, rules, meeting_busy or owner, meeting_writer or owner.writer,
                       tell_owner, clock=clock, sleep=sleep)
    meeting_graph = meeting.build(meeting.MeetingDeps(
        desk=desk, offer_expires=rules.hold_h * 3600, hold_expires=rules.hold_h * 3600))
    meeting_flow = GraphWorkflow(meeting_graph, max_steps=4 * meeting.MAX_ROUNDS)  # paging
    workflows: dict[str, AnyWorkflow] = {
        w.name: w for w in (triage_graph, loop_graph, content_graph, brief, meeting_flow)}
    store = RunStore(db)
    runs = Runs(store, traces_dir=settings.traces_dir)  # each run's JSONL trace as it stops
    for graph in (triage_graph, loop_graph, content_graph):
        runs.register(graph)
    runs.register(brief)
    runs.register(meeting_flow)

    reminders = Reminders(db)
    wakeup = Wakeup(settings.home / "wake.sock")
    reminders.listeners.append(wakeup.poke)
    if "set_reminder" not in tools.names():
        tools.register(reminder_tool(reminders, owner.zone))

    locks = ChatLocks()
    strangers = Strangers(settings, ledger.inbox, ledger.buttons, outbox, people,
                          notifier.owner_chat, clock=clock, sleep=sleep)
    runner = ChatRunner(runs, store, ledger.run_chats)
    meeting_chat = MeetingChat(store=meetings, desk=desk, buttons=ledger.buttons, outbox=outbox,
                               runner=runner, access=access, clock=clock)
    if "propose_meeting" not in tools.names():
        tools.register(meeting_tool(meeting_chat.propose))
        tools.register(move_tool(meeting_chat.move))
    wait_rules = WaitRules(
        guest_nodes=frozenset(("meeting", node) for node in meeting.GUEST_NODES),
        owner_nodes=frozenset(("meeting", node) for node in meeting.OWNER_NODES))
    kinds = PressKinds(
        handlers={PAIRING_KIND: owner_presses(access, strangers),
                  MEETING_KIND: decided(meeting_chat.press)},
        legacy_prefixes={PAIRING_RUN: PAIRING_KIND, CANCEL: MEETING_KIND})
    decisions = Decisions(buttons=ledger.buttons, cursors=ledger.cursors,
                          run_chats=ledger.run_chats, outbox=outbox, store=store, runs=runs,
                          access=access, locks=locks, notifier=notifier, rules=wait_rules,
                          kinds=kinds)
    handlers: list[Handler] = [
        WorkflowCommands(runner, workflows, decisions, owner.today),
        MeetingsListing(meeting_chat),
        ChatCommands(CommandHandler(memory, reminders, ModelCommand(big, models.small.name)),
                     store, runs, ledger.run_chats),
        TypedPicks(decisions),
        WaitAnswers(store, runs, ledger.run_chats, outbox, ledger.buttons, decisions),
        NewRun(triage_graph if settings.graph_workflows else loop_graph, runner, memory,
               decisions, notifier, outbox)]
    answerer = Answerer(inbox=ledger.inbox, outbox=outbox, handlers=handlers, memory=memory,
                        runs=runs, deadline=settings.answer_deadline,
                        make_files=lambda: attachments_for(settings), live=live)
    briefing = Briefing(workflows["brief"], runner, decisions, notifier, outbox, locks,
                        owner.today)

    async def prune_traces() -> None:
        prune(settings.traces_dir, settings.trace_days)

    async def queue_owed() -> None:
        await decisions.queue_owed_outcomes(time.time() - OWED_WINDOW_S)

    gateway = Gateway(
        access=access, inbox=ledger.inbox, outbox=outbox, strangers=strangers,
        answerer=answerer, decisions=decisions, locks=locks,
        bursts=Bursts(settings.merge_window),
        on_start=[prune_traces, mcp.start, runs.recover, queue_owed, notifier.resume,
                  strangers.resume, decisions.expire])

    async def owner_chat() -> tuple[str, str]:
        """The owner's platform and direct chat, as the notifier reaches them."""
        platform = notifier.targets("")[0]
        return platform, await notifier.owner_chat(platform)

    scheduler = build_scheduler(SchedulerDeps(
        reminders=reminders, runs=runs, deliver=outbox.deliver,
        queued=outbox.queued, owner_chat=owner_chat,
        loop=run_loop, model=models.big, tools=tools, system=prompts["loop"],
        calendar=owner.calendar, remind_before_min=settings.remind_before, zone=owner.zone(),
        owner_platform=lambda: notifier.targets("")[0],
        brief=briefing.scheduled,  # FRONTDESK_BRIEF_AT's daily task
        backup=lambda day, keep: daily_backup_of(settings.home, day, keep)))
    return App(settings=settings, db=db, inbox=ledger.inbox, parts=ledger.parts,
               buttons=ledger.buttons, cursors=ledger.cursors, outbox=outbox, memory=memory,
               store=store, runs=runs, models=models, model_choices=model_choices,
               spend_log=spend_log, owner=owner,
               access=access, people=people,
               notifier=notifier, tools=tools, mcp=mcp, prompts=prompts, triage=triage_graph,
               loop_graph=loop_graph, content=content_graph, brief=brief,
               meeting=meeting_graph, meetings=meetings, reminders=reminders, wakeup=wakeup,
               gateway=gateway, briefing=briefing, answerer=answerer,
               decisions=decisions, scheduler=scheduler)


async def daily_backup_of(home: Path, day: str, keep: int) -> Path:
    """FRONTDESK_BACKUP_DAYS's backup of ``day`` (its module loaded when first taken)."""
    from bot.backups.archive import daily_backup

    return await asyncio.to_thread(daily_backup, home, day, keep)


def attachments_for(settings: Settings) -> Attachments:
    """The attachments pipeline (images, PDFs, voice), imported when first needed."""
    from bot.media.attachments import Attachments

    return Attachments.from_settings(settings)


def build_loop_graph(model: Any, tools: ToolRegistry, system: str) -> Graph:
    """Graph mode off: one node, the plain agent loop, so the run is still durable and traced."""
    loop = agent_node(run_loop, model, tools,
                      caller=lambda state: caller_from_sender(state["sender"]),
                      prompt=lambda state: [*state.get("history", []),
                                            triage.user_turn(state)],
                      output_key="reply", system=system, live=True)
    graph = Graph("loop")
    graph.add_node(Node("loop", loop))
    graph.add_edge(START, "loop")
    graph.add_edge("loop", END)
    return graph
