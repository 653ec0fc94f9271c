"""The assembler: every long-lived object of Frontdesk, built once from the settings and wired.

``assemble(settings)`` opens the one database and calls each concern's ``build`` in turn —
delivery, access, models, tools, workflows, meetings, reminders, chat — handing each only the
bundles it uses (which is how ``graphs/`` stays free of ``bot/`` imports: the workflows get
their services here). Nothing receives the result: the CLI commands start what they need of
it (``frontdesk run``: ``App.serving``, the adapters, the timer). What serving a message does
not need is not loaded here: the attachments pipeline is built on the first message with
files, the MCP client only when a servers file is configured, the dashboard only when its port
is set.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.access.build import Admission
from bot.access.build import build as build_access
from bot.calendar.ics import Calendar
from bot.calendar.owner import OwnerCalendar
from bot.calendar.writer import BusyTime, CalendarWriter
from bot.chat.build import Chat
from bot.chat.build import build as build_chat
from bot.config.settings import Settings
from bot.delivery.build import Delivery
from bot.delivery.build import build as build_delivery
from bot.meetings.build import Meetings
from bot.meetings.build import build as build_meetings
from bot.models import Models
from bot.models.build import ChatModels
from bot.models.build import build as build_models
from bot.reminders.build import ReminderParts, TimerDeps, build_timer
from bot.reminders.build import build as build_reminders
from bot.reminders.timer import Scheduler, schedule_backups, schedule_briefing
from bot.retention.prune import prune_in_thread, prune_often, schedule_prune
from bot.schema import open_database
from bot.tools.build import Tools
from bot.tools.build import build as build_tools
from bot.workflows.build import Flows
from bot.workflows.build import build as build_flows
from memory.notes import Memory
from sqlitedb.database import Database

log = logging.getLogger(__name__)
EXPIRY_CHECK_S = 30.0  # how often overdue approvals are sent their expiry route


@dataclass(frozen=True)
class App:
    """What ``assemble`` built, by concern; the CLI commands (and the tests) start what they
    need of it."""

    settings: Settings
    db: Database  # frontdesk.db's writer and reader, under every store below
    memory: Memory
    owner: OwnerCalendar  # the owner's zone, today, calendar (and CalDAV writer, when set)
    delivery: Delivery  # inbox, outbox parts, buttons, cursors, the outbox, the notifier
    admission: Admission  # the allowlist, the people let in, strangers
    models: ChatModels  # small, each chat's big, the choices, the spend log
    tools: Tools  # the tool registry and the MCP servers
    flows: Flows  # the workflows, the run store and the durable runs
    meetings: Meetings
    reminders: ReminderParts
    chat: Chat  # the gateway, its answerer and decisions, the briefing
    timer: Scheduler  # fires reminders, the briefing and backups; ``frontdesk run`` starts it

    async def start(self) -> None:
        """Before any message: the gateway's recovery, the daily tasks of the timer
        (FRONTDESK_BRIEF_AT's briefing, FRONTDESK_BACKUP_DAYS's backup: unset, cancelled;
        FRONTDESK_KEEP_DAYS's prune),
        and the wake-up socket that tells the timer of reminders set by `frontdesk chat`."""
        await self.chat.gateway.start()
        zone = self.owner.zone()
        platform = self.delivery.notifier.targets("")[0]
        schedule_briefing(self.reminders.store, self.settings.brief_at, zone, platform)
        schedule_backups(self.reminders.store, self.settings.backup_days, zone, platform)
        schedule_prune(self.reminders.store, zone, platform)  # FRONTDESK_KEEP_DAYS's, daily
        await self.reminders.wakeup.listen(self.timer.poke)

    async def answer_from_dashboard(self, run_id: str, option: str) -> tuple[bool, str]:
        """The owner's answer to a waiting run, given on the dashboard's page."""
        from bot.dashboard.actions import answer_wait

        return await answer_wait(self.flows.store, self.admission.access.owners,
                                 self.delivery.buttons, self.chat.gateway, run_id, option)

    def serving(self) -> list[Coroutine[Any, Any, None]]:
        """What runs beside the adapters while the bot serves: expiring overdue approvals,
        the reminder timer, keeping the CalDAV copy fresh (when one is configured), and the
        prunes between the daily ones when FRONTDESK_KEEP_DAYS is short."""
        return [self.expire_forever(), self.timer.run(), self.owner.keep_fresh(),
                prune_often(self.settings.keep_days,
                            lambda: prune_in_thread(self.db, self.settings))]

    async def expire_forever(self) -> None:
        """Now and then, let overdue approvals follow their expiry route."""
        while True:
            await asyncio.sleep(EXPIRY_CHECK_S)
            try:
                await self.chat.decisions.expire()
            except Exception:  # the next round tries again
                log.exception("expiring waits failed")

    async def close(self) -> None:
        """Stop what the process started beside the gateway: the wake-up socket, MCP servers
        (the database stays open: ``db.close()`` when nothing will write any more)."""
        await self.reminders.wakeup.close()
        await self.tools.mcp.stop()


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
    delivery = build_delivery(settings, db, clock=clock, sleep=sleep)
    admission = build_access(settings, db, delivery, clock=clock, sleep=sleep)
    chat_models = build_models(settings, db, models)
    tools = build_tools(settings, memory, owner.calendar, delivery.notifier.notify)
    flows = build_flows(settings, db, chat_models, tools.registry, memory, owner,
                        delivery.notifier.notify)
    reminders = build_reminders(settings, db, tools.registry, owner)
    meetings = build_meetings(settings, db, owner, delivery.tell_owner, flows.runs,
                              clock=clock, sleep=sleep, writer=meeting_writer,
                              busy=meeting_busy, reminders=reminders.store,
                              tell_guest=delivery.outbox.deliver_with)
    chat = build_chat(settings, memory, delivery, admission, chat_models, tools, flows,
                      meetings, reminders, owner, clock=clock)
    timer = build_timer(settings, reminders, flows.runs, chat_models.big, tools.registry,
                        flows.prompts["loop"], owner, TimerDeps(
                            deliver=delivery.outbox.deliver, queued=delivery.outbox.queued,
                            owner_chat=delivery.notifier.owner_place,
                            owner_platform=lambda: delivery.notifier.targets("")[0],
                            brief=chat.briefing.scheduled,
                            backup=lambda day, keep: daily_backup_of(settings.home, day,
                                                                     keep),
                            prune=lambda: prune_in_thread(db, settings)))
    return App(settings, db, memory, owner, delivery, admission, chat_models, tools, flows,
               meetings, reminders, chat, timer)


async def daily_backup_of(home: Path, day: str, keep: int) -> Path:
    """FRONTDESK_BACKUP_DAYS's backup of ``day`` (its module loaded when first taken)."""
    from bot.backups.archive import daily_backup

    return await asyncio.to_thread(daily_backup, home, day, keep)
