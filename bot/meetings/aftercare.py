"""What follows a booking: its event's parts (link, SEQUENCE, who organises), the guest's
invitation, and the reminders before it (``FRONTDESK_MEETING_REMIND``).

The reminders are rows of the reminder timer's own store (``bot.reminders``, kind
``meeting``), so each fires exactly once across restarts like any reminder. Their sources,
``meeting:<uid>:<sequence>:<lead>m:<guest|owner>``, make each one once per event and move:
a reschedule cancels the earlier sequences' and adds its own, a cancel drops them all, and a
replay of either after a crash finds what it did. A lead time already past at booking is
skipped. Times read as each side reads them (``bot.meetings.views``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Protocol

from bot.config.text import one_line
from bot.meetings.extras import MeetingExtras
from bot.meetings.invitation import REQUEST, EventParts, invitation, invitation_file
from bot.meetings.link import new_link
from bot.meetings.store import Meeting
from bot.meetings.views import MeetingTimes
from bot.meetings.zones import GuestZones
from bot.messages import OutgoingFile

log = logging.getLogger(__name__)
SOURCE = "meeting:"


class ReminderBook(Protocol):
    """The reminder timer's store, as far as a meeting uses it (``bot.reminders.store``)."""

    def add(self, scope: str, platform: str, chat_id: str, text: str, when: datetime, *,
            zone: tzinfo, rrule: str | None = None, kind: str = "text",
            source: str | None = None) -> Any: ...

    def cancel_sources(self, prefix: str, keep: str | None) -> int: ...

    def pending_sources(self, prefix: str) -> Sequence[Any]: ...


TellGuest = Callable[[str, str, str, str, OutgoingFile | None], Awaitable[None]]


def lead_label(minutes: int) -> str:
    """15 -> '15 minutes', 120 -> '2 hours', 1440 -> '1 day' (as the reminder says it)."""
    for size, unit in ((24 * 60, "day"), (60, "hour"), (1, "minute")):
        if minutes % size == 0:
            count = minutes // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{minutes} minutes"


def lead_setting(minutes: int) -> str:
    """15 -> '15m', 1440 -> '1d': as FRONTDESK_MEETING_REMIND writes it."""
    for size, unit in ((24 * 60, "d"), (60, "h")):
        if minutes % size == 0:
            return f"{minutes // size}{unit}"
    return f"{minutes}m"


@dataclass
class Aftercare(MeetingTimes):
    """A booked meeting's event parts, invitation and reminders."""

    extras: MeetingExtras
    zone: tzinfo  # the owner's
    link_setting: str = "off"  # FRONTDESK_MEETING_LINK
    leads: tuple[int, ...] = ()  # FRONTDESK_MEETING_REMIND, minutes
    organizer_email: str | None = None
    reminders: ReminderBook | None = None
    tell_guest: TellGuest | None = None
    clock: Callable[[], float] = time.time
    summary: str = "Meeting with {name}: {topic}"
    zones: GuestZones | None = None  # each guest's time zone (``bot.chat.timezones``)

    @property
    def owner_zone(self) -> tzinfo:
        return self.zone

    def parts(self, uid: str, meeting: Meeting | None = None) -> EventParts:
        """The event's parts: its link chosen once, its SEQUENCE as stored, the guest's address
        when they wrote by mail (their chat is their address)."""
        link = self.extras.link_for(uid, lambda: new_link(self.link_setting, uid))
        guest_email = meeting.chat_id if meeting is not None and meeting.platform == "email" \
            else None
        return EventParts(uid, self.extras.sequence(uid), link, self.organizer_email,
                          guest_email=guest_email, summary=self.summary)

    def invitation(self, meeting: Meeting, uid: str, method: str = REQUEST) -> OutgoingFile:
        """The guest's iTIP invitation (REQUEST, or CANCEL) as a chat file, named by the
        meeting's day in the guest's zone (the owner's until the guest's is known)."""
        ics = invitation(meeting, self.parts(uid, meeting), self.clock(), method)
        return invitation_file(meeting, ics, self.guest_zone(meeting.guest) or self.zone,
                               method)

    def join_line(self, uid: str | None) -> str:
        """' Join: LINK' when the event has a link, else ''."""
        link = self.extras.link(uid)
        return f" Join: {link}" if link else ""

    # -- reminders -------------------------------------------------------------------------
    def remind(self, meeting: Meeting, uid: str) -> int:
        """The reminders of this event's current time: the earlier times' cancelled, each lead
        still ahead added once for the guest and the owner. How many are pending."""
        if self.reminders is None or meeting.slot is None:
            return 0
        sequence = self.extras.sequence(uid)
        for earlier in range(sequence):
            self.reminders.cancel_sources(f"{SOURCE}{uid}:{earlier}:", None)
        now = datetime.fromtimestamp(self.clock(), self.zone)
        for lead in self.leads:
            at = meeting.slot.start.astimezone(self.zone) - timedelta(minutes=lead)
            if at <= now + timedelta(seconds=1):
                continue  # already past at booking: skipped
            for who in ("guest", "owner"):
                if who == "guest" and meeting.guest == "owner":
                    continue  # the owner's own meeting: one reminder
                self._add(meeting, uid, sequence, lead, who, at)
        return len(self.reminders.pending_sources(f"{SOURCE}{uid}:"))

    def _add(self, meeting: Meeting, uid: str, sequence: int, lead: int, who: str,
             at: datetime) -> None:
        assert self.reminders is not None and meeting.slot is not None
        topic = one_line(meeting.topic, 120) or "your meeting"
        name = one_line(meeting.guest_name, 64) or "your guest"
        with_whom = f" with {name}" if who == "owner" else " with the owner"
        text = (f"Reminder: {topic}{with_whom} in {lead_label(lead)}, "
                f"{self.owner_when(meeting) if who == 'owner' else self.guest_when(meeting)}."
                f"{self.join_line(uid)}")
        scope, chat = (meeting.guest, meeting.chat_id) if who == "guest" else ("owner", "")
        try:
            self.reminders.add(scope, meeting.platform, chat, text, at, zone=self.zone,
                               kind="meeting", source=f"{SOURCE}{uid}:{sequence}:{lead}m:{who}")
        except ValueError as exc:  # ReminderError: e.g. the time passed meanwhile
            log.warning("meeting %s: reminder %dm for the %s not set: %s", meeting.id, lead,
                        who, exc)

    def forget(self, uid: str | None) -> int:
        """A cancelled meeting: its reminders still to fire are cancelled."""
        if self.reminders is None or not uid:
            return 0
        return self.reminders.cancel_sources(f"{SOURCE}{uid}:", None)


def still_to_fire(reminders: ReminderBook, uid: str | None) -> list[str]:
    """A meeting's lead times still to fire ('1d', '15m'), each once, longest first
    (``frontdesk meetings --json``, with no Aftercare)."""
    leads: list[str] = []
    for reminder in reminders.pending_sources(f"{SOURCE}{uid}:") if uid else []:
        lead = str(reminder.source).split(":")[-2].removesuffix("m")
        if lead.isdigit() and lead_setting(int(lead)) not in leads:
            leads.append(lead_setting(int(lead)))
    return leads
