"""The reminders concern, built: the reminders' table, the wake-up socket, the timer.

``build`` is what the assembler (``bot.app``) calls for the store and its ``set_reminder``
tool; ``build_timer`` the timer that fires them (and the daily briefing and backup tasks),
once the chat layer it hands the briefing to exists.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.calendar.owner import OwnerCalendar
from bot.config.settings import Settings
from bot.models.base import Model
from bot.reminders.store import Reminders
from bot.reminders.timer import Scheduler, SchedulerDeps, build_scheduler
from bot.reminders.tool import reminder_tool
from bot.reminders.wakeup import Wakeup
from bot.tools.loop import run_loop
from bot.tools.registry import ToolRegistry
from graphs.runs import Runs
from sqlitedb.database import Database


@dataclass(frozen=True)
class ReminderParts:
    """The reminders, and the socket that tells a running bot of one set elsewhere."""

    store: Reminders
    wakeup: Wakeup


def build(settings: Settings, db: Database, tools: ToolRegistry,
          owner: OwnerCalendar) -> ReminderParts:
    """The reminders over ``db``, with the ``set_reminder`` tool in ``tools``."""
    reminders = Reminders(db)
    wakeup = Wakeup(settings.home / "wake.sock")
    reminders.listeners.append(wakeup.poke)
    if "set_reminder" not in tools.names():
        tools.register(reminder_tool(reminders, owner.zone))
    return ReminderParts(reminders, wakeup)


@dataclass(frozen=True)
class TimerDeps:
    """What the timer sends through and reads, from the other concerns."""

    deliver: Callable[[str, str, str, str], Awaitable[None]]  # the outbox's deliver
    queued: Callable[[str, str, str], bool]  # (platform, chat, key): in the outbox?
    owner_chat: Callable[[], Awaitable[tuple[str, str]]]  # (platform, chat) of the owner
    owner_platform: Callable[[], str]
    brief: Callable[[str], Awaitable[None]]  # FRONTDESK_BRIEF_AT's briefing of a day
    backup: Callable[[str, int], Awaitable[Path]]  # FRONTDESK_BACKUP_DAYS's, keeping N
    prune: Callable[[], Awaitable[object]] | None = None  # FRONTDESK_KEEP_DAYS's daily prune


def build_timer(settings: Settings, parts: ReminderParts, runs: Runs, model: Model,
                tools: ToolRegistry, system: str, owner: OwnerCalendar,
                deps: TimerDeps) -> Scheduler:
    """The timer that fires the reminders (the owner's prompt tasks on ``model``), calendar
    notices (FRONTDESK_REMIND_BEFORE), the briefing and the daily backup."""
    return build_scheduler(SchedulerDeps(
        reminders=parts.store, runs=runs, deliver=deps.deliver, queued=deps.queued,
        owner_chat=deps.owner_chat, loop=run_loop, model=model, tools=tools, system=system,
        calendar=owner.calendar, remind_before_min=settings.remind_before, zone=owner.zone(),
        owner_platform=deps.owner_platform, brief=deps.brief, backup=deps.backup,
        prune=deps.prune))
