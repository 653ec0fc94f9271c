"""Wire Frontdesk's services from the settings: database, memory, calendar, models, tools, graphs.

``Services.from_settings(settings)`` is the one place where the parts meet; the gateway and
the CLI commands receive the result. Workflows get their services passed in here (``build``
with deps), which is how ``graphs/`` stays free of ``bot/`` imports. The one ``Outbox`` is
built here too and handed to the owner notifier and (through ``Services``) to the gateway.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, TypeAlias

from bot.access.people import People
from bot.calendar.ics import Calendar, CalendarError, machine_zone, zone_named
from bot.chat.workflow_commands import briefing_input
from bot.config.settings import Settings
from bot.delivery.ledger import Ledger
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.models import Models, build_models, classify_offline
from bot.reminders.store import Reminders
from bot.reminders.timer import Scheduler, SchedulerDeps, build_scheduler
from bot.reminders.tool import reminder_tool
from bot.reminders.wakeup import Wakeup
from bot.tools.builtin import (
    build_fact_tools,
    build_tools,
    build_writing_tools,
    read_agenda,
)
from bot.tools.loop import run_loop
from bot.tools.mcp_client import McpTools, build_mcp
from bot.tools.registry import Caller, ToolRegistry
from graphs import END, START, Graph, Node
from graphs.agent_nodes import agent_node
from graphs.codefirst import Workflow
from graphs.runs import Runs, RunStore, WaitInfo
from graphs.workflows import brief as brief_flow
from graphs.workflows import content, triage
from memory.notes import Memory
from sqlitedb import connect

log = logging.getLogger(__name__)
PROMPTS_DIR = Path(__file__).resolve().parent.parent / "config" / "prompts"
AnyWorkflow: TypeAlias = Graph | Workflow  # a graph workflow or a code one


def load_prompts(directory: Path = PROMPTS_DIR) -> dict[str, str]:
    """Every ``*.txt`` prompt by its stem (users edit them in ``config/prompts``)."""
    return {path.stem: path.read_text(encoding="utf-8").strip()
            for path in sorted(directory.glob("*.txt"))}


class Access:
    """The allowlist: who is the owner and who else may write, per platform."""

    def __init__(self, settings: Settings, people: People | None = None) -> None:
        self.owners = {**settings.owner_ids(), "console": "owner"}
        self.allowed = {"telegram": settings.telegram_allowed_users,
                        "discord": settings.discord_allowed_users}
        self.people = people  # whom the owner allowed through pairing (bot.access.pairing)

    def level(self, platform: str, user_id: str) -> str | None:
        """'owner', 'allowed' or None. Every console user is local, hence allowed."""
        if user_id and self.owners.get(platform) == user_id:
            return "owner"
        if platform == "console" or user_id in self.allowed.get(platform, frozenset()):
            return "allowed"
        if self.people is not None and platform in self.allowed \
                and self.people.status(platform, user_id) == "allowed":
            return "allowed"
        return None


def match_option(wait: WaitInfo, text: str) -> str | None:
    """The option a typed answer means (its label or number), the text for a free-text wait,
    None when a text does not answer a multiple-choice question."""
    if not wait.options:
        return text
    typed = text.strip().lower().rstrip(".!")
    for number, option in enumerate(wait.options, start=1):
        if typed in {option.lower(), str(number)}:
            return option
    return None


@dataclass
class Services:
    """Everything the gateway and the commands use, built once from the settings."""

    settings: Settings
    ledger: Ledger
    outbox: Outbox
    memory: Memory
    store: RunStore
    models: Models
    calendar: Calendar | None
    access: Access
    notifier: OwnerNotifier
    tools: ToolRegistry
    prompts: dict[str, str]
    people: People
    triage: Graph = field(init=False)
    loop_graph: Graph = field(init=False)
    content: Graph = field(init=False)
    brief: Workflow = field(init=False)
    workflows: dict[str, AnyWorkflow] = field(init=False)  # by name
    runs: Runs = field(init=False)  # the durable rules over ``store`` and the workflows
    reminders: Reminders = field(init=False)
    scheduler: Scheduler = field(init=False)  # fires reminders; ``frontdesk run`` starts it
    wakeup: Wakeup = field(init=False)  # tells a running bot's timer of reminders set here
    mcp: McpTools | None = None  # the MCP servers; ``start_tools`` starts them

    def __post_init__(self) -> None:
        self.triage = triage.build(triage.TriageDeps(
            small=self.models.small, big=self.models.big, loop=run_loop, tools=self.tools,
            make_caller=caller_from_sender, search_notes=self.note_texts,
            read_calendar=self.calendar_context, notify_owner=self.notify_from_sender,
            fallback_classify=classify_offline, prompts=self.prompts))
        self.loop_graph = build_loop_graph(self)
        self.content = content.build(content.ContentDeps(
            small=self.models.small, big=self.models.big, loop=run_loop,
            writing_tools=build_writing_tools(self.memory),
            facts_tools=build_fact_tools(self.memory), make_caller=caller_from_sender,
            save_note=self.memory.add, prompts=self.prompts,
            max_words=self.settings.draft_max_words))
        self.brief = brief_flow.build(brief_flow.BriefDeps(
            small=self.models.small, big=self.models.big, loop=run_loop,
            notes_tools=build_fact_tools(self.memory), make_caller=caller_from_sender,
            read_agenda=self.agenda_for, save_note=self.memory.add, prompts=self.prompts))
        self.workflows = {w.name: w for w in (self.triage, self.loop_graph, self.content,
                                                self.brief)}
        self.runs = Runs(self.store)
        for graph in (self.triage, self.loop_graph, self.content):
            self.runs.register(graph)
        self.runs.register(self.brief)
        self.reminders = Reminders(connect(self.settings.database))
        self.wakeup = Wakeup(self.settings.home / "wake.sock")
        self.reminders.listeners.append(self.wakeup.poke)
        if "set_reminder" not in self.tools.names():
            self.tools.register(reminder_tool(self.reminders, self.owner_zone))
        self.scheduler = build_scheduler(SchedulerDeps(
            reminders=self.reminders, runs=self.runs, deliver=self.outbox.deliver,
            queued=lambda *where: bool(self.ledger.parts(*where)), owner_chat=self.owner_chat,
            loop=run_loop, model=self.models.big, tools=self.tools, system=self.prompts["loop"],
            calendar=self.calendar, remind_before_min=self.settings.remind_before,
            zone=self.owner_zone(), owner_platform=lambda: self.notifier.targets("")[0]))

    @classmethod
    def from_settings(cls, settings: Settings, *, models: Models | None = None) -> Services:
        """Open the database and build every service (no network is touched here)."""
        settings.traces_dir.mkdir(parents=True, exist_ok=True)
        memory = Memory(connect(settings.database))
        calendar = (Calendar(settings.calendar, tz=settings.timezone,
                             cache_dir=settings.home / "cache") if settings.calendar else None)
        ledger = Ledger(connect(settings.database))
        outbox = Outbox(ledger)
        notifier = OwnerNotifier(settings, outbox)
        people = People(connect(settings.database))
        return cls(settings=settings, ledger=ledger, outbox=outbox, memory=memory,
                   store=RunStore(settings.database),
                   models=models or build_models(settings), calendar=calendar,
                   access=Access(settings, people), notifier=notifier, people=people,
                   tools=build_tools(memory, calendar, notifier.notify), prompts=load_prompts(),
                   mcp=build_mcp(settings.mcp_config, settings.home, settings.mcp_timeout))

    async def start_tools(self) -> None:
        """Start the MCP servers and register their tools (a failing one is a log line)."""
        if self.mcp is not None:
            await self.mcp.start(self.tools)

    async def stop_tools(self) -> None:
        """Stop the MCP servers (stdio servers end)."""
        if self.mcp is not None:
            await self.mcp.stop()

    # -- the services triage needs, as plain functions ---------------------------------
    def note_texts(self, scope: str, query: str, k: int) -> list[str]:
        """Memory hits for the agent's context, in the caller's own scope."""
        return [hit.text for hit in self.memory.search(scope, query, k)]

    def calendar_context(self, sender: dict[str, Any]) -> str:
        """Today's events for the owner, free/busy for anyone else; '' without a calendar."""
        if self.calendar is None:
            return ""
        try:
            return read_agenda(self.calendar, 0, bool(sender["is_owner"]))
        except CalendarError as exc:
            log.warning("calendar unavailable: %s", exc)
            return ""

    def owner_zone(self) -> tzinfo:
        """The owner's zone: the calendar's, else FRONTDESK_TIMEZONE, else the machine's."""
        if self.calendar is not None:
            return self.calendar.zone
        return zone_named(self.settings.timezone) if self.settings.timezone else machine_zone()

    def agenda_for(self, day: str) -> list[dict[str, Any]]:
        """The owner's events on ``day`` (ISO date) for the briefing; [] without a calendar."""
        if self.calendar is None:
            return []
        start = datetime.combine(date.fromisoformat(day), datetime.min.time(), self.owner_zone())
        try:
            found = self.calendar.events(start, start + timedelta(days=1))
        except CalendarError as exc:
            log.warning("calendar unavailable for the briefing: %s", exc)
            return []
        return [event.to_json() for event in found.events]

    def today(self) -> str:
        """Today's ISO date in the owner's zone."""
        return datetime.now(self.owner_zone()).date().isoformat()

    def brief_input(self, platform: str, chat_id: str) -> dict[str, Any]:
        """The briefing's input: today in the owner's zone, the owner as sender."""
        return briefing_input(self.today(), platform, chat_id)

    async def owner_chat(self) -> tuple[str, str]:
        """The owner's platform and direct chat, as the notifier reaches them."""
        platform = self.notifier.targets("")[0]
        return platform, await self.notifier.owner_chat(platform)

    async def notify_from_sender(self, sender: dict[str, Any], text: str) -> str:
        """triage's notify_now: the sender dict becomes a caller."""
        return await self.notifier.notify(caller_from_sender(sender), text)


def caller_from_sender(sender: dict[str, Any]) -> Caller:
    """The tool caller for a workflow's plain-dict sender."""
    return Caller(scope=str(sender["scope"]), is_owner=bool(sender["is_owner"]),
                  platform=str(sender["platform"]), chat_id=str(sender["chat_id"]),
                  name=str(sender.get("name") or ""),
                  message_id=str(sender.get("message_id") or ""))


def build_loop_graph(services: Services) -> Graph:
    """Graph mode off: one node, the plain agent loop, so the run is still durable and traced."""
    loop = agent_node(run_loop, services.models.big, services.tools,
                      caller=lambda state: caller_from_sender(state["sender"]),
                      prompt=lambda state: [*state.get("history", []),
                                            triage.user_turn(state)],
                      output_key="reply", system=services.prompts["loop"])
    graph = Graph("loop")
    graph.add_node(Node("loop", loop))
    graph.add_edge(START, "loop")
    graph.add_edge("loop", END)
    return graph
