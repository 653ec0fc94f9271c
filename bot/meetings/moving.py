"""Book a reschedule: the booked event moves to the newly held time in place — the same UID,
``SEQUENCE`` raised by one, still one event — and the guest gets the updated invitation.

Until this runs the old time stays booked (its record ``booked``, its event where it was); a
declined or expired reschedule leaves both as they are. Each step is safe to replay after a
crash: the SEQUENCE is raised once per request (``MeetingExtras.bump``), the calendar's
``update`` writes the same bytes again, the records move only from where they were, and each
notice goes out once per outbox key.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

from bot.calendar.writer import Busy, BusyTime, CalendarWriter
from bot.config.text import one_line, shown
from bot.meetings.aftercare import Aftercare
from bot.meetings.desk_parts import TellOwner
from bot.meetings.invitation import stored_event
from bot.meetings.slots import MeetingRules, Slot
from bot.meetings.store import Meeting, MeetingStore


class MeetingDesk(Protocol):
    """What a move uses of ``bot.meetings.desk.MeetingDesk``."""

    store: MeetingStore
    rules: MeetingRules
    busy_time: BusyTime
    writer: CalendarWriter | None
    tell_owner: TellOwner

    @property
    def clock(self) -> Callable[[], float]: ...

    def owner_when(self, meeting: Meeting) -> str: ...

    def guest_when(self, meeting: Meeting) -> str: ...

    def rule_broken(self, meeting: Meeting, busy: list[Busy],
                    old: Meeting | None = None) -> str | None: ...

    async def conflict(self, meeting: Meeting, why: str) -> dict[str, Any]: ...


def free_of_move(old: Meeting | None, busy: list[Busy],
                 taken: list[Slot]) -> tuple[list[Busy], list[Slot]]:
    """Busy time and Frontdesk's taken slots without the booking a reschedule moves (it frees
    its own time: a move may overlap it or follow it at once); unchanged for a new request."""
    if old is None or old.slot is None:
        return busy, taken
    start, end = old.slot.start, old.slot.end
    return ([b for b in busy if not (b.start == start and b.end == end)],
            [s for s in taken if not (s.start == start and s.end == end)])


async def book_move(desk: MeetingDesk, care: Aftercare, meeting: Meeting,
                    old_id: str) -> dict[str, Any]:
    """Move the booking ``old_id`` to ``meeting``'s held time (one try: a calendar that cannot
    be reached raises CalendarUnavailable, and the desk's retries call again)."""
    old = desk.store.get(old_id)
    if old is None or not old.uid or old.slot is None or meeting.slot is None:
        raise ValueError(f"meeting {meeting.id} moves {old_id}, which is not booked")
    uid = old.uid
    if meeting.status == "booked":  # a replay after the record: tell, write nothing
        return await moved_outcome(desk, care, meeting, old, uid)
    if old.status != "booked" and old.status != "cancelled":
        raise ValueError(f"meeting {old_id} is {old.status}: nothing to move")
    if desk.writer is not None:
        slot, pad = meeting.slot.utc(), timedelta(minutes=desk.rules.buffer)
        busy = await desk.writer.busy_now(slot.start - pad, slot.end + pad)
    else:
        busy = desk.busy_time.busy(meeting.slot.start, meeting.slot.end)
    if why := desk.rule_broken(meeting, busy, old):
        return await desk.conflict(meeting, why)
    care.extras.bump(uid, meeting.id)
    ics = stored_event(meeting, care.parts(uid, meeting), desk.clock())
    if desk.writer is not None and not await desk.writer.update(uid, ics):
        await desk.writer.create(uid, ics)  # gone from the calendar meanwhile: put it back
    desk.store.set_status(old.id, "cancelled", note=f"moved to {meeting.id}",
                          only_from=("booked",))
    desk.store.set_status(meeting.id, "booked", uid=uid)
    booked = desk.store.get(meeting.id)
    assert booked is not None
    name = shown(one_line(booked.guest_name, 64), "markdown")
    by_hand = "" if desk.writer is not None else " No CalDAV calendar is set: please move it " \
        "by hand."
    await desk.tell_owner(meeting.platform, f"meeting-moved:{meeting.id}",
                          f"Moved: the meeting with {name} from {desk.owner_when(old)} to "
                          f"{desk.owner_when(booked)} (UID {uid}, sequence "
                          f"{care.extras.sequence(uid)}).{by_hand}")
    return await moved_outcome(desk, care, booked, old, uid)


async def moved_outcome(desk: MeetingDesk, care: Aftercare, meeting: Meeting, old: Meeting,
                        uid: str) -> dict[str, Any]:
    """The run's answer: to the guest who asked, with the updated invitation; when the owner
    moved it, the guest is told apart (once per key) and the owner's chat gets a short line."""
    care.remind(meeting, uid)
    assert meeting.slot is not None and old.slot is not None
    text = (f"Moved: your meeting is now on {desk.guest_when(meeting)} "
            f"(it was {desk.guest_when(old)}). The updated invitation is "
            f"attached.{care.join_line(uid)}")
    invite = care.invitation(meeting, uid)
    if care.extras.moved_by_owner(meeting.id) and meeting.guest != "owner" and \
            care.tell_guest is not None:
        await care.tell_guest(meeting.platform, meeting.chat_id,
                              f"meeting-moved-guest:{meeting.id}", text, invite)
        return {"outcome": "booked", "uid": uid,
                "reply": f"Moved ✓ {desk.owner_when(meeting)}; the guest is told, with the "
                         "updated invitation."}
    return {"outcome": "booked", "uid": uid, "reply": text, "file": invite.to_json()}
