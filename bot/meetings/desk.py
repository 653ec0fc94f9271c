"""The meeting workflow's services: the request's record, the slots, the texts, and Book.

``MeetingDesk`` implements ``graphs.workflows.meeting.MeetingDesk`` over the store, the rules,
the owner's busy time (the local copy: never the network while offering) and, when CalDAV is
configured, the writable calendar. Book is where "exactly once" is kept: the event's UID is
derived from the request, so it is looked up (``exists``) before anything else; the slot is
then checked against the calendar as it is now (``busy_now``) and created with
``If-None-Match`` (``create``). A calendar that cannot be reached is tried again with backoff
(the owner told once that it is pending), up to a bound, then the request ends visibly.
Without a writable calendar the owner gets the event's ``.ics`` file to add by hand. Booked,
the guest's answer carries the event's ``.ics`` too (``file`` in ``book``'s outcome, as
``OutgoingFile.to_json``: plain JSON for the run's state).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from bot.calendar.writer import Busy, BusyTime, CalendarUnavailable, CalendarWriter
from bot.config.text import one_line, shown
from bot.meetings.aftercare import Aftercare
from bot.meetings.desk_parts import TellOwner
from bot.meetings.event import event_file, event_ics, uid_for
from bot.meetings.first_read import first_read
from bot.meetings.invitation import stored_event
from bot.meetings.moving import book_move, free_of_move
from bot.meetings.slots import MeetingRules, Slot, free_slots, parse_moment, why_not
from bot.meetings.store import Meeting, MeetingStore
from bot.meetings.views import MeetingTimes
from bot.meetings.zones import (
    ASK,
    GuestZones,
    button_label,
    zone_key,
)

log = logging.getLogger(__name__)
RETRY_DELAYS = (5.0, 15.0, 45.0, 120.0)  # seconds between tries of an unreachable calendar
FIRST_READ_S = 10.0  # how long an offer waits for the calendar's first read at start
BEING_READ = ("I can't offer times just yet: the owner's calendar is still being read. "
              "Please ask again in a minute.")
NEARBY = timedelta(hours=1)




def zone_name(zone: tzinfo) -> str:
    """The zone's IANA name ('Europe/Berlin') where it has one."""
    return str(getattr(zone, "key", zone))


@dataclass
class MeetingDesk(MeetingTimes):
    """The workflow's desk: records, slots, texts and the booking, for one owner."""

    store: MeetingStore
    rules: MeetingRules
    busy_time: BusyTime  # the local copy (CalDAV's, else the .ics): offers and holds
    writer: CalendarWriter | None  # None: no CalDAV, the owner adds the event by hand
    tell_owner: TellOwner
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    retry_delays: Sequence[float] = RETRY_DELAYS
    summary: str = "Meeting with {name}: {topic}"
    first_read_s: float = FIRST_READ_S
    poll: Callable[[float], Awaitable[None]] = asyncio.sleep  # the first read's polling pace
    zones: GuestZones | None = None  # each guest's time zone (``bot.chat.timezones``)
    aftercare: Aftercare | None = None  # the invitation, link, reminders and reschedules

    @property
    def owner_zone(self) -> tzinfo:
        return self.rules.zone

    @property
    def zone_name(self) -> str:
        return zone_name(self.rules.zone)

    def now(self) -> datetime:
        """Now, in UTC (where comparing times is exact)."""
        return datetime.fromtimestamp(self.clock(), UTC)

    def _busy(self, start: datetime, end: datetime) -> list[Busy] | None:
        """The busy time around [start, end), buffers included; None when the calendar has
        never been read (the caller offers nothing then, rather than times it cannot check)."""
        pad = timedelta(minutes=self.rules.buffer)
        try:
            return self.busy_time.busy(start.astimezone(UTC) - pad, end.astimezone(UTC) + pad)
        except CalendarUnavailable as exc:
            log.warning("calendar unavailable for meetings: %s", exc)
            return None

    async def calendar_read(self) -> bool:
        """Wait (up to ``first_read_s``) for the calendar's first read (``first_read``)."""
        return await first_read(self.busy_time, self.now, self.first_read_s, self.poll)

    # -- the workflow's questions ----------------------------------------------------------
    def open(self, meeting_id: str, run_id: str, request: dict[str, Any]) -> str | None:
        sender = request["sender"]
        others = [m for m in self.store.open_of(str(sender["scope"]), self.rules.hold_h * 3600)
                  if m.id != meeting_id]
        if others and not sender.get("is_owner"):
            return ("You have a meeting request open already: pick one of its times above, "
                    "or wait for the owner's answer. One request at a time.")
        self.store.offered(meeting_id, run_id, sender, one_line(str(request["topic"] or ""),
                                                                300))
        if self.aftercare and meeting_id != run_id and (moved := self.aftercare.extras.moves(
                run_id)):  # a reschedule's new request after a conflict moves the same one
            self.aftercare.extras.moving(meeting_id, moved,
                                         self.aftercare.extras.moved_by_owner(run_id))
        return None

    def offer(self, meeting_id: str, request: dict[str, Any],
              after: str | None) -> list[dict[str, str]]:
        now = self.now()
        last = now + timedelta(days=self.rules.days + 1)
        minutes = int(request.get("minutes") or self.rules.minutes)
        if not (request.get("sender") or {}).get("is_owner"):  # a guest may ask for less
            minutes = min(minutes, self.rules.minutes)
        busy = self._busy(now, last)
        if busy is None:  # no times it cannot check: the text says to ask again later
            return []
        old = self.moved_from(meeting_id)  # a reschedule: its booking's time is free to it
        busy, taken = free_of_move(old, busy, self.store.taken(meeting_id))
        slots = free_slots(self.rules, busy, taken, now, skip=old.start if old else None,
                           after=datetime.fromisoformat(after) if after else None,
                           minutes=max(5, min(minutes, 8 * 60)),
                           earliest=parse_moment(request.get("earliest"), self.rules),
                           latest=parse_moment(request.get("latest"), self.rules))
        zone = self.guest_zone(str((request.get("sender") or {}).get("scope") or ""))
        return [{"start": s.start.isoformat(), "end": s.end.isoformat(),
                 "label": button_label(s.start, zone or self.rules.zone),
                 "offered_at": now.isoformat()}
                for s in slots]

    def offer_text(self, request: dict[str, Any], slots: list[dict[str, str]],
                   note: str) -> str:
        topic = one_line(str(request.get("topic") or ""), 300)
        about = f" about “{shown(topic, 'markdown')}”" if topic else ""
        lead = f"{note}\n\n" if note else ""
        if not slots and self._busy(self.now(), self.now() + timedelta(minutes=1)) is None:
            return f"{lead}{BEING_READ}"  # never "no free time" for times it cannot check
        if not slots:
            return (f"{lead}I found no free time for a meeting{about} in the next "
                    f"{self.rules.days} days. Please ask again later.")
        sender = request.get("sender") or {}
        zone = self.guest_zone(str(sender.get("scope") or ""))
        if zone is None and not sender.get("is_owner") and self.zones is not None \
                and self.zones.ask_once(str(sender.get("scope") or "")):
            lead = f"{lead}{ASK}? Tell me, and I'll show times in yours.\n\n"
        in_zone = f"your time, {zone_key(zone)}" if zone else f"times in {self.zone_name}"
        return (f"{lead}Free times for a meeting{about} ({in_zone}). "
                "Pick one; the owner confirms it:")

    def hold(self, meeting_id: str, slot: dict[str, str]) -> str | None:
        picked = Slot(datetime.fromisoformat(slot["start"]).astimezone(self.rules.zone),
                      datetime.fromisoformat(slot["end"]).astimezone(self.rules.zone))
        busy = self._busy(picked.start, picked.end)
        if busy is None:
            return "the owner's calendar cannot be read just now"
        until = self.clock() + self.rules.hold_h * 3600
        # The notice counts from when the slot was offered (never later than now).
        offered = min(self.now(), datetime.fromisoformat(slot.get("offered_at") or
                                                         self.now().isoformat()))
        if picked.start <= self.now():
            return "that time has passed"
        old = self.moved_from(meeting_id)
        return self.store.hold(meeting_id, picked, until, lambda taken: why_not(
            self.rules, picked, *free_of_move(old, busy, taken), offered))

    def held_text(self, meeting_id: str) -> str:
        meeting = self._meeting(meeting_id)
        return (f"Held for you: {self.guest_when(meeting)}. I've asked the owner to confirm and "
                "will tell you here.")

    def approval_text(self, meeting_id: str) -> str:
        meeting = self._meeting(meeting_id)
        platform_id = meeting.guest.partition(":")[2] or meeting.guest
        slot = meeting.slot
        near = self._nearby(slot) if slot else []
        lines = [f"Meeting request from {shown(one_line(meeting.guest_name, 64), 'markdown')} "
                 f"({meeting.platform} id {shown(platform_id, 'markdown')})",
                 f"When: {self.owner_when(meeting)}",
                 f"Topic: “{shown(meeting.topic, 'markdown')}”" if meeting.topic
                 else "Topic: (none given)",
                 "Nearby: " + "; ".join(near) if near else "Nearby: nothing within an hour.",
                 "Approve or Decline?"]
        return "\n".join(lines)

    def close(self, meeting_id: str, status: str) -> str:
        self.store.set_status(meeting_id, status, only_from=("offered", "held"))
        if self.aftercare and (old := self.moved_from(meeting_id)):
            return f"The time is not changed: your meeting stays on {self.guest_when(old)}."
        if status == "declined":
            return ("Sorry, the owner can't make that time. You're welcome to ask for "
                    "another one with /meet.")
        return "Your meeting request has expired, so the time is free again. Ask again any time."

    def moved_from(self, meeting_id: str) -> Meeting | None:
        """The booking a reschedule request moves, if it is one."""
        moved = self.aftercare.extras.moves(meeting_id) if self.aftercare else None
        return self.store.get(moved) if moved else None

    async def closed(self, meeting_id: str, status: str) -> None:
        """After ``close``: a reschedule declined or expired tells the owner the old time
        stays (the guest's sentence is ``close``'s)."""
        if (old := self.moved_from(meeting_id)) is not None:
            await self.tell_owner(old.platform, f"meeting-move-{status}:{meeting_id}",
                                  f"The reschedule of the meeting with "
                                  f"{shown(one_line(old.guest_name, 64), 'markdown')} was "
                                  f"{status}: it stays on {self.owner_when(old)}.")

    # -- Book: exactly one event -----------------------------------------------------------
    async def book(self, meeting_id: str) -> dict[str, Any]:
        meeting = self._meeting(meeting_id)
        slot, uid = meeting.slot, uid_for(meeting_id)
        if slot is None:
            raise ValueError(f"meeting {meeting_id} has no slot to book")
        moved = self.aftercare.extras.moves(meeting_id) if self.aftercare else None
        if moved and self.aftercare and self.writer is None:
            return await book_move(self, self.aftercare, meeting, moved)
        if meeting.status == "booked" and not moved:  # a replay after the record: tell only
            return self._booked(meeting, uid)
        if self.writer is None:
            # the owner approved; a calendar unread just now adds no busy time here
            if why := self.rule_broken(meeting, self._busy(slot.start, slot.end) or []):
                return await self.conflict(meeting, why)
            ics = self._event_bytes(meeting, uid)
            self.store.set_status(meeting_id, "booked", uid=uid)
            await self.tell_owner(meeting.platform, f"meeting-ics:{meeting_id}",
                                  f"Approved: {self.owner_when(meeting)}. No CalDAV calendar is "
                                  "set, so please add the attached event to your calendar "
                                  "(open the file, or import it).",
                                  event_file(meeting, ics, self.rules.zone))
            return self._booked(self._meeting(meeting_id), uid, ics)
        delays = list(self.retry_delays)
        for attempt in range(len(delays) + 1):
            try:
                if moved and self.aftercare:
                    return await book_move(self, self.aftercare, meeting, moved)
                return await self._write(meeting, uid)
            except CalendarUnavailable as exc:
                log.warning("meeting %s: the calendar is unavailable (%s)", meeting_id, exc)
                if attempt == len(delays):
                    break
                if attempt == 0:
                    await self.tell_owner(meeting.platform, f"meeting-pending:{meeting_id}",
                                          f"Approved {self.owner_when(meeting)}, but your calendar "
                                          f"cannot be reached ({one_line(str(exc))}). I'm "
                                          "trying again and will tell you.")
                await self.sleep(delays[attempt])
        self.store.set_status(meeting_id, "expired", note="the calendar could not be reached",
                              only_from=("held",))
        await self.tell_owner(meeting.platform, f"meeting-gave-up:{meeting_id}",
                              f"I gave up booking {self.owner_when(meeting)}: your calendar could "
                              f"not be reached after {len(delays) + 1} tries. Nothing was "
                              "written; the guest was told.")
        return {"outcome": "gave_up",
                "reply": "Sorry, I couldn't put the meeting in the owner's calendar (it could "
                         "not be reached), so it is not booked. Please ask again with /meet."}

    async def _write(self, meeting: Meeting, uid: str) -> dict[str, Any]:
        """One try: look the UID up, re-check the slot as the calendar is now, create."""
        assert self.writer is not None and meeting.slot is not None
        ics = self._event_bytes(meeting, uid)  # a move never comes here: it keeps its own UID
        if not await self.writer.exists(uid):
            slot, pad = meeting.slot.utc(), timedelta(minutes=self.rules.buffer)
            busy = await self.writer.busy_now(slot.start - pad, slot.end + pad)
            if why := self.rule_broken(meeting, busy):
                return await self.conflict(meeting, why)
            await self.writer.create(uid, ics)  # False: it exists already, which is ours
        self.store.set_status(meeting.id, "booked", uid=uid)
        booked = self._meeting(meeting.id)
        await self.tell_owner(meeting.platform, f"meeting-booked:{meeting.id}",
                              f"Booked: {self.owner_when(booked)} with "
                              f"{shown(one_line(booked.guest_name, 64), 'markdown')} "
                              f"(UID {uid}).{self._join(uid)}")
        return self._booked(booked, uid, ics)

    def rule_broken(self, meeting: Meeting, busy: list[Busy],
                    old: Meeting | None = None) -> str | None:
        """At Book: the rules again, the notice counted from the hold, not from now (``old``:
        the booking a reschedule moves, whose own time is free to it)."""
        assert meeting.slot is not None
        if meeting.slot.start <= self.now():
            return "that time has passed"
        held_at = meeting.slot.utc().start - timedelta(hours=self.rules.notice_h)
        return why_not(self.rules, meeting.slot, *free_of_move(old, busy, self.store.taken(
            meeting.id)), min(self.now(), held_at))

    async def conflict(self, meeting: Meeting, why: str) -> dict[str, Any]:
        self.store.set_status(meeting.id, "conflict", note=why, only_from=("held",))
        await self.tell_owner(meeting.platform, f"meeting-conflict:{meeting.id}",
                              f"Not booked: {self.owner_when(meeting)} — {why}. Nothing was "
                              "written; the guest is offered new times.")
        return {"outcome": "conflict",
                "reply": f"Sorry, {why} by the time it was confirmed. Here are other times."}

    def _booked(self, meeting: Meeting, uid: str, ics: bytes | None = None) -> dict[str, Any]:
        """The guest's answer, with the event's ``.ics`` (the same bytes the calendar got;
        a replay after the record builds them again, with the same UID and times)."""
        if self.aftercare is not None:  # an iTIP invitation, the link, the reminders
            self.aftercare.remind(meeting, uid)
            return {"outcome": "booked", "uid": uid,
                    "reply": f"Booked: {self.guest_when(meeting)}. See you then!"
                             f"{self.aftercare.join_line(uid)}",
                    "file": self.aftercare.invitation(meeting, uid).to_json()}
        ics = ics or event_ics(meeting, uid, self.summary, self.clock())
        return {"outcome": "booked", "uid": uid,
                "reply": f"Booked: {self.guest_when(meeting)}. See you then!",
                "file": event_file(meeting, ics, self.rules.zone).to_json()}

    def _event_bytes(self, meeting: Meeting, uid: str) -> bytes:
        """The event the calendar stores (and the owner's file to add by hand)."""
        if self.aftercare is None:
            return event_ics(meeting, uid, self.summary, self.clock())
        return stored_event(meeting, self.aftercare.parts(uid, meeting), self.clock())

    # -- helpers ----------------------------------------------------------------------------
    def _meeting(self, meeting_id: str) -> Meeting:
        meeting = self.store.get(meeting_id)
        if meeting is None:
            raise KeyError(f"no meeting request {meeting_id!r}")
        return meeting

    def _join(self, uid: str) -> str:
        return self.aftercare.join_line(uid) if self.aftercare else ""

    def _nearby(self, slot: Slot) -> list[str]:
        """Busy stretches within an hour of the slot, as times only."""
        try:
            busy = self.busy_time.busy(slot.utc().start - NEARBY, slot.utc().end + NEARBY)
        except Exception as exc:  # the owner's message goes out without it
            log.warning("reading busy time near a meeting failed: %s", exc)
            return []
        zone = self.rules.zone
        return [f"busy {b.start.astimezone(zone):%H:%M}–{b.end.astimezone(zone):%H:%M}"
                for b in busy]


def upcoming(store: MeetingStore, guest: str | None, now: float) -> list[Meeting]:
    """A person's booked meetings still to come (``None``: everyone's), soonest first."""
    return store.listing(guest, upcoming_after=now, status="booked")
