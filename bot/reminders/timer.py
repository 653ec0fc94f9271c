"""The reminder timer: one task asleep until the earliest due occurrence, each firing a traced run.

``Scheduler.run`` waits on an ``asyncio.Event`` with a time-out of exactly the time left until
the next due occurrence (no polling: with nothing pending it waits on the event alone, and
the calendar's re-read, when ``FRONTDESK_REMIND_BEFORE`` is set, is its only other wake-up).
Adding or cancelling a reminder pokes the event, so a new earlier one is seen at once.

Each occurrence fires as a run of the ``reminder`` graph with a run id made from the reminder
and its occurrence, so ``frontdesk runs`` and the dashboard show it, and the message goes
through the outbox under the key ``reminder:<id>:<occurrence>``: however often a crash makes
it fire again, the chat gets it once. An occurrence that came due before this process started
is marked late ("(late: due 17:00)"); a recurring one then moves to its next occurrence after
now, so days offline owe one message, not one per missed day.

``FRONTDESK_BRIEF_AT`` is one such recurring task (kind ``brief``, set by ``schedule_briefing``
at start): its occurrence runs the briefing workflow (``SchedulerDeps.brief``, the gateway's) as the
run ``brief-<day>``, so a briefing missed while the bot was down is sent once, and a restart
on the same day does not make a second.

``FRONTDESK_BACKUP_DAYS`` is another (kind ``backup``, set by ``schedule_backups``): its
occurrence backs up the home through the ``backup`` the assembler hands in (``bot.backups``:
``backups/frontdesk-daily-<day>.tar.gz``, once a day, the newest N kept); a backup missed
while the bot was down is taken once at start.

Usage::

    scheduler = build_scheduler(SchedulerDeps(reminders=..., runs=..., ...))
    task = asyncio.create_task(scheduler.run())   # in ``frontdesk run``
    await scheduler.tick()                        # tests: fire what is due by the clock
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from datetime import time as TimeOfDay
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.calendar.events import EventSource
from bot.calendar.ics import CalendarError
from bot.config.text import chat_place, shown
from bot.reminders.store import Reminder, Reminders
from bot.tools.registry import Caller
from graphs import END, START, Graph, Node
from graphs.agent_nodes import agent_node
from graphs.protocols import AgentLoop
from graphs.runs import Runs

log = logging.getLogger(__name__)
WORKFLOW = "reminder"
RETRY_S = 30.0  # an occurrence whose firing failed is tried again after this long
CALENDAR_EVERY_S = 300.0  # how often the calendar is re-read for notices
CALENDAR_AHEAD_S = 2 * 3600.0  # how far past the notice lead the calendar is read
BRIEF_SOURCE = "setting:FRONTDESK_BRIEF_AT="  # + the value: the briefing task it set
BACKUP_SOURCE = "setting:FRONTDESK_BACKUP_DAYS="  # + how many to keep: the backup task
BACKUP_AT = TimeOfDay(3, 30)  # local: when a bot left running takes its daily backup


@dataclass(frozen=True)
class SchedulerDeps:
    """What firing needs, passed in by ``bot.app``."""

    reminders: Reminders
    runs: Runs
    deliver: Callable[[str, str, str, str], Awaitable[None]]  # the outbox's deliver
    queued: Callable[[str, str, str], bool]  # (platform, chat, key): parts in the outbox?
    owner_chat: Callable[[], Awaitable[tuple[str, str]]]  # (platform, chat) of the owner
    loop: AgentLoop  # the agent loop, for the owner's prompt tasks
    model: Any
    tools: Any
    system: str = ""
    calendar: EventSource | None = None
    remind_before_min: float | None = None  # FRONTDESK_REMIND_BEFORE
    zone: tzinfo | None = None  # the owner's, for calendar notices
    owner_platform: Callable[[], str] = lambda: "console"
    clock: Callable[[], float] = time.time
    # The briefing of a day (``bot.chat.briefing.Briefing.scheduled``), for ``brief`` tasks.
    brief: Callable[[str], Awaitable[None]] | None = None
    # The daily backup of a day, keeping the newest N (``bot.backups``), for ``backup`` tasks.
    backup: Callable[[str, int], Awaitable[Path]] | None = None
    # FRONTDESK_KEEP_DAYS's daily prune (``bot.retention``), for ``prune`` tasks.
    prune: Callable[[], Awaitable[object]] | None = None


def occurrence_run_id(reminder: Reminder) -> str:
    """The one run that fires this occurrence: the same id after any restart."""
    digest = hashlib.sha256(reminder.occurrence_key.encode()).hexdigest()[:16]
    return f"reminder-{reminder.id}-{digest}"


def late_label(due: datetime, now: datetime) -> str:
    """'17:00' when it was due today, else 'Mon 30 Nov 17:00'."""
    if due.date() == now.astimezone(due.tzinfo).date():
        return f"{due:%H:%M}"
    return f"{due:%a} {due.day} {due:%b} {due:%H:%M}"


def fire_input(reminder: Reminder, late: bool, now: float) -> dict[str, Any]:
    """The run's input: the reminder, where it goes, and its late mark if any."""
    due = reminder.due
    return {"reminder_id": reminder.id, "text": reminder.text, "kind": reminder.kind,
            "platform": reminder.platform, "chat_id": reminder.chat_id,
            "key": reminder.occurrence_key, "due": reminder.due_local,
            "late": late_label(due, datetime.fromtimestamp(now, due.tzinfo)) if late else "",
            "sender": {"scope": reminder.scope, "is_owner": reminder.scope == "owner",
                       "platform": reminder.platform, "chat_id": reminder.chat_id,
                       "message_id": "", "name": reminder.scope}}


def build_reminder_graph(deps: SchedulerDeps) -> Graph:
    """where (the chat) → [agent, for a prompt task] → send (through the outbox, once)."""

    async def where(state: dict[str, Any]) -> dict[str, Any]:
        """The chat it was set in; the owner's chat for a calendar notice."""
        if state["chat_id"]:
            return {"target": [state["platform"], state["chat_id"]]}
        platform, chat = await deps.owner_chat()
        return {"target": [platform, chat]}

    def route(state: dict[str, Any]) -> str:
        return "agent" if state["kind"] == "prompt" and state["sender"]["is_owner"] else "send"

    async def send(state: dict[str, Any]) -> dict[str, Any]:
        """The message, late-marked when late, delivered under the occurrence's key; the
        words someone set are shown literally (no link, no markup of theirs)."""
        platform, chat = state["target"]
        words = shown(str(state["text"]), chat_place(platform))
        if state["kind"] == "prompt":
            body = str(state.get("answer") or "").strip() or (
                f"I couldn't carry out \"{words}\" this time.")
        elif state["kind"] in ("calendar", "meeting"):  # whole notices, written as sent
            body = words
        else:
            body = f"⏰ Reminder: {words}"
        if state["late"]:
            body += f" (late: due {state['late']})"
        try:
            await deps.deliver(platform, chat, state["key"], body)
        except Exception:
            if not deps.queued(platform, chat, state["key"]):
                raise
            log.warning("reminder %s queued for %s chat %s; it goes with the next flush",
                        state["reminder_id"], platform, chat)
        return {"reply": body}

    def caller(state: dict[str, Any]) -> Caller:
        platform, chat = state["target"]
        return Caller(scope="owner", is_owner=True, platform=platform, chat_id=chat,
                      name="owner")

    graph = Graph(WORKFLOW)
    graph.add_node(Node("where", where))
    graph.add_node(Node("agent", agent_node(deps.loop, deps.model, deps.tools, caller=caller,
                                            prompt=lambda s: str(s["text"]),
                                            output_key="answer", system=deps.system or None),
                        on_error="send"))
    graph.add_node(Node("send", send))
    graph.add_edge(START, "where")
    graph.add_router("where", route, {"agent": "agent", "send": "send"})
    graph.add_edge("agent", "send")
    graph.add_edge("send", END)
    return graph


def calendar_notices(events: list[Any], before_min: float, now: datetime
                     ) -> dict[str, tuple[datetime, str]]:
    """One notice per timed, not cancelled event still to start: source -> (when, text)."""
    wanted: dict[str, tuple[datetime, str]] = {}
    for event in events:
        if event.all_day or not isinstance(event.start, datetime) or event.start <= now:
            continue
        if (event.status or "").upper() == "CANCELLED":
            continue
        when = max(event.start - timedelta(minutes=before_min), now + timedelta(seconds=1))
        minutes = math.ceil((event.start - when).total_seconds() / 60 - 1e-9)
        until = f"–{event.end:%H:%M}" if isinstance(event.end, datetime) else ""
        source = f"calendar:{event.summary}|{event.start.isoformat()}|{event.end.isoformat()}"
        wanted[source] = (when, f"In {minutes} min: {event.summary}, "
                                f"{event.start:%H:%M}{until}")
    return wanted


class Scheduler:
    """Fires due occurrences on time, once; sleeps exactly until the next one."""

    def __init__(self, deps: SchedulerDeps) -> None:
        self.deps = deps
        self.reminders = deps.reminders
        self.clock = deps.clock
        self.started_at = self.clock()  # due before this: missed while down, marked late
        self.wake = asyncio.Event()
        self.asleep = asyncio.Event()  # set while the timer waits for its next due time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry_at: dict[tuple[int, float], float] = {}  # (id, due_at) -> retry time
        self._calendar_at = 0.0  # when the calendar is read next
        self.fired: deque[tuple[Reminder, float]] = deque(maxlen=100)  # (occurrence, at)
        deps.reminders.listeners.append(self.poke)

    def poke(self) -> None:
        """Something changed: recompute the next wake-up (safe from any thread)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.wake.set)

    async def run(self) -> None:
        """Forever: re-read the calendar when due, fire what is due, sleep until the next."""
        self._loop = asyncio.get_running_loop()
        while True:
            self.wake.clear()
            if self.calendar_due():
                await self.sync_calendar()
            await self.tick()
            self.asleep.set()
            with contextlib.suppress(TimeoutError):  # the next due time came
                await asyncio.wait_for(self.wake.wait(), self.delay())
            self.asleep.clear()

    def calendar_due(self) -> bool:
        """Calendar notices are on and the last read is old enough."""
        return (self.deps.calendar is not None and bool(self.deps.remind_before_min)
                and self.clock() >= self._calendar_at)

    def delay(self) -> float | None:
        """Seconds until the next thing to do; None: only a poke can wake us."""
        now = self.clock()
        times = [at for at in self._retry_at.values()]
        blocked = {(r.id, r.due_at) for r in self.reminders.due(now)}
        if not blocked:
            times += [t for t in [self.reminders.next_due_at()] if t is not None]
        if self.deps.calendar is not None and self.deps.remind_before_min:
            times.append(self._calendar_at)
        return max(0.0, min(times) - now) if times else None

    async def tick(self) -> list[Reminder]:
        """Fire every occurrence due by the clock (not one waiting out a retry); the fired."""
        fired: list[Reminder] = []
        # a retry time past is as good as none: dropped, so a reminder deleted while it
        # waited out a retry leaves nothing behind
        self._retry_at = {slot: at for slot, at in self._retry_at.items() if at > self.clock()}
        for reminder in self.reminders.due(self.clock()):
            now = self.clock()
            slot = (reminder.id, reminder.due_at)
            if self._retry_at.get(slot, 0.0) > now:
                continue
            try:
                await self.fire(reminder, late=reminder.due_at < self.started_at, now=now)
            except Exception:
                log.exception("reminder %d could not fire; trying again in %.0f s",
                              reminder.id, RETRY_S)
                self._retry_at[slot] = now + RETRY_S
                continue
            self._retry_at.pop(slot, None)
            self.fired.append((reminder, self.clock()))
            self.reminders.advance(reminder, self.clock())
            fired.append(reminder)
        return fired

    async def fire(self, reminder: Reminder, *, late: bool, now: float) -> None:
        """The occurrence's run: started, or (after a crash) taken as it ended."""
        if reminder.kind == "brief":  # its own workflow, the run brief-<day>
            if self.deps.brief is None:
                raise RuntimeError("the briefing is not wired to a gateway")
            await self.deps.brief(reminder.due_local[:10])
            return
        if reminder.kind == "backup":  # FRONTDESK_BACKUP_DAYS's daily backup of the home
            if self.deps.backup is None:
                raise RuntimeError("the daily backup is not wired to the home")
            day = datetime.fromtimestamp(now, ZoneInfo(reminder.zone)).date().isoformat()
            log.info("daily backup: %s", await self.deps.backup(day, backups_kept(reminder)))
            return
        if reminder.kind == "prune":  # FRONTDESK_KEEP_DAYS's: what is older goes
            if self.deps.prune is None:
                raise RuntimeError("the daily prune is not wired to the database")
            log.info("daily prune: %s", await self.deps.prune())
            return
        run_id = occurrence_run_id(reminder)
        meta = {"platform": reminder.platform, "chat_id": reminder.chat_id,
                "user": reminder.scope, "reminder": reminder.id}
        result = await self.deps.runs.start(WORKFLOW, fire_input(reminder, late, now),
                                            run_id=run_id, meta=meta)
        if result.status != "completed":
            raise RuntimeError(f"the run {run_id} of reminder {reminder.id} is {result.status}")

    async def sync_calendar(self) -> tuple[int, int]:
        """Re-read the calendar: a notice per coming event; moved or cancelled ones follow."""
        calendar, before = self.deps.calendar, self.deps.remind_before_min
        self._calendar_at = self.clock() + CALENDAR_EVERY_S
        if calendar is None or not before:
            return 0, 0
        now = datetime.fromtimestamp(self.clock(), calendar.zone)
        end = now + timedelta(minutes=before, seconds=CALENDAR_AHEAD_S)
        try:
            found = await asyncio.to_thread(calendar.events, now, end)
        except CalendarError as exc:
            log.warning("calendar notices: the calendar could not be read: %s", exc)
            return 0, 0
        wanted = calendar_notices(found.events, before, now)
        return self.reminders.sync_calendar(wanted, self.deps.owner_platform(),
                                            self.deps.zone or calendar.zone, self.clock())


def schedule_briefing(reminders: Reminders, at: TimeOfDay | None, zone: tzinfo,
                      platform: str) -> Reminder | None:
    """FRONTDESK_BRIEF_AT as the owner's daily task, from its next occurrence; a task of an
    earlier value is cancelled, and with the setting unset, every one. One the owner cancelled
    stays cancelled while the value is the same."""
    source = BRIEF_SOURCE + at.strftime("%H:%M") if at else None
    reminders.cancel_sources(BRIEF_SOURCE, keep=source)
    if at is None or source is None:
        return None
    now = datetime.fromtimestamp(reminders.clock(), zone)
    first = now.replace(hour=at.hour, minute=at.minute, second=0, microsecond=0)
    return reminders.add("owner", platform, "", "the morning briefing", first, zone=zone,
                         rrule="FREQ=DAILY", kind="brief", source=source)


def schedule_backups(reminders: Reminders, keep: int, zone: tzinfo,
                     platform: str) -> Reminder | None:
    """FRONTDESK_BACKUP_DAYS as a daily task at BACKUP_AT keeping ``keep`` backups; a task of
    an earlier value is cancelled, and with 0, every one."""
    source = f"{BACKUP_SOURCE}{keep}" if keep > 0 else None
    reminders.cancel_sources(BACKUP_SOURCE, keep=source)
    if source is None:
        return None
    now = datetime.fromtimestamp(reminders.clock(), zone)
    first = now.replace(hour=BACKUP_AT.hour, minute=BACKUP_AT.minute, second=0, microsecond=0)
    return reminders.add("owner", platform, "", "the daily backup", first, zone=zone,
                         rrule="FREQ=DAILY", kind="backup", source=source)


def backups_kept(reminder: Reminder) -> int:
    """How many daily backups a backup task keeps (its setting's value, in its source)."""
    value = (reminder.source or "").removeprefix(BACKUP_SOURCE)
    return int(value) if value.isdigit() and int(value) > 0 else 1


def build_scheduler(deps: SchedulerDeps) -> Scheduler:
    """The reminder workflow registered with the runs (so recovery finds it), and the timer."""
    deps.runs.register(build_reminder_graph(deps))
    return Scheduler(deps)
