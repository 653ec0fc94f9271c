"""The meetings concern, built: the requests and bookings, the desk, the meeting workflow.

``build`` is what the assembler (``bot.app``) calls: the store over the one database, the desk
that offers, holds and books within ``FRONTDESK_MEETING_*``'s rules (busy time from the owner's
calendar — the CalDAV copy merged with the ``.ics``, TRANSP honoured — and bookings written to
CalDAV when it is configured, else the owner adds the event's ``.ics`` by hand), and the
meeting workflow registered with the durable runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.calendar.owner import OwnerCalendar
from bot.calendar.writer import BusyTime, CalendarWriter
from bot.config.settings import Settings
from bot.meetings.aftercare import Aftercare, ReminderBook, TellGuest
from bot.meetings.desk import MeetingDesk
from bot.meetings.desk_parts import TellOwner
from bot.meetings.extras import MeetingExtras
from bot.meetings.failures import MeetingWorkflow
from bot.meetings.slots import MeetingRules
from bot.meetings.store import MeetingStore
from graphs import Graph
from graphs.runs import GraphWorkflow, Runs
from graphs.workflows import meeting
from sqlitedb.database import Database


@dataclass(frozen=True)
class Meetings:
    """Meeting requests and bookings, and the workflow that makes them."""

    store: MeetingStore
    desk: MeetingDesk
    graph: Graph
    flow: GraphWorkflow  # the graph as the runs know it (paging step limit; a failed run closes)


def build(settings: Settings, db: Database, owner: OwnerCalendar, tell_owner: TellOwner,
          runs: Runs, *, clock: Callable[[], float] = time.time,
          sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
          writer: CalendarWriter | None = None, busy: BusyTime | None = None,
          reminders: ReminderBook | None = None, tell_guest: TellGuest | None = None
          ) -> Meetings:
    """The meetings over ``db``; ``writer`` / ``busy`` replace the owner's calendar as what
    bookings are written to and busy time read from (tests); ``clock``/``sleep`` pace the
    booking's retries; ``reminders`` is the reminder timer's store (the reminders before a
    meeting), ``tell_guest`` the outbox's deliver (a guest told of the owner's reschedule)."""
    store = MeetingStore(db, clock=clock)
    rules = MeetingRules.from_settings(settings, owner.zone())
    aftercare = Aftercare(MeetingExtras(db), rules.zone, settings.meeting_link,
                          settings.meeting_remind, settings.owner_email, reminders, tell_guest,
                          clock=clock)
    desk = MeetingDesk(store, rules, busy or owner, writer or owner.writer, tell_owner,
                       clock=clock, sleep=sleep, aftercare=aftercare)
    graph = meeting.build(meeting.MeetingDeps(
        desk=desk, offer_expires=rules.hold_h * 3600, hold_expires=rules.hold_h * 3600))
    flow = MeetingWorkflow(graph, store, max_steps=4 * meeting.MAX_ROUNDS)  # offers page on
    runs.register(flow)
    return Meetings(store, desk, graph, flow)
