"""Reschedule in one step: Reschedule beside Cancel, new times, the old time kept until the
owner approves, then the same event (same UID) moved with SEQUENCE + 1."""

from __future__ import annotations

from datetime import datetime, timedelta

import icalendar

from bot.meetings.event import uid_for
from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, Desk, DeskFactory
from tests.meetings.test_invitation import book


def the_event(data: bytes) -> icalendar.Event:
    [event] = icalendar.Calendar.from_ical(data).walk("VEVENT")
    return event


async def press_reschedule(desk: Desk, user: str) -> None:
    listing = await desk.send("/meetings", user)
    move = next(b for b in listing.buttons if b.label.startswith("Reschedule"))
    assert (await desk.press(move, user)).accepted


async def test_the_guest_reschedules_and_the_same_event_moves(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    await book(desk)
    assert desk.calendar is not None
    [before] = desk.calendar.ours()
    await press_reschedule(desk, GUEST)
    offer = desk.adapter.last_buttons(GUEST)
    assert offer[-1].label == "None of these"
    assert "stays booked" in desk.to(GUEST)[-1]
    assert (await desk.press(offer[0], GUEST)).accepted
    assert desk.calendar.ours() == [before]  # the old time stays booked until approved
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert (await desk.press(approve, OWNER)).accepted
    [after] = desk.calendar.ours()
    assert after["uid"] == before["uid"] and after["start"] != before["start"]
    assert int(the_event(after["ics"].encode())["SEQUENCE"]) == 1
    moved = [t for t in desk.to(GUEST) if t.startswith("Moved:")]
    assert len(moved) == 1
    invite = desk.adapter.files[-1][1]
    assert str(icalendar.Calendar.from_ical(invite.data)["METHOD"]) == "REQUEST"
    assert int(the_event(invite.data)["SEQUENCE"]) == 1
    assert str(the_event(invite.data)["UID"]) == before["uid"]
    assert sum(t.startswith("Moved:") for t in desk.owner_texts()) == 1
    statuses = sorted(m.status for m in desk.app.meetings.store.listing())
    assert statuses == ["booked", "cancelled"]
    assert "update" in desk.calendar.calls() and desk.calendar.calls().count("create") == 1


async def test_a_declined_reschedule_keeps_the_old_time_and_both_are_told(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    await book(desk)
    assert desk.calendar is not None
    [before] = desk.calendar.ours()
    await press_reschedule(desk, GUEST)
    assert (await desk.press(desk.adapter.last_buttons(GUEST)[0], GUEST)).accepted
    decline = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Decline")
    assert (await desk.press(decline, OWNER)).accepted
    assert desk.calendar.ours() == [before]
    assert "stays on" in desk.to(GUEST)[-1]
    assert sum("was declined: it stays on" in t for t in desk.owner_texts()) == 1
    booked = [m for m in desk.app.meetings.store.listing() if m.status == "booked"]
    assert [m.uid for m in booked] == [before["uid"]]


async def test_the_owner_reschedules_and_the_guest_gets_the_update(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    await book(desk)
    assert desk.calendar is not None
    [before] = desk.calendar.ours()
    await press_reschedule(desk, OWNER)
    offer = desk.adapter.last_buttons(OWNER_CHAT)
    assert (await desk.press(offer[0], OWNER)).accepted  # the owner's pick is the approval
    [after] = desk.calendar.ours()
    assert after["uid"] == before["uid"] and after["start"] != before["start"]
    assert sum(t.startswith("Moved:") for t in desk.to(GUEST)) == 1
    chat, invite = desk.adapter.files[-1]
    assert chat == GUEST and int(the_event(invite.data)["SEQUENCE"]) == 1


async def test_a_move_may_overlap_or_follow_its_own_old_time(make_desk: DeskFactory) -> None:
    desk = await make_desk()  # a 10-minute buffer: without the move, S+45m would be first
    await book(desk)
    [old] = desk.app.meetings.store.listing()
    assert old.slot is not None
    await press_reschedule(desk, GUEST)
    moving = next(m for m in desk.app.meetings.store.listing() if m.status == "offered")
    offered = [datetime.fromisoformat(s["start"])
               for s in desk.app.flows.runs.load(moving.run_id).get("slots")]
    later = old.slot.start + timedelta(minutes=15)  # overlaps the old half hour
    assert old.slot.start not in offered  # the time it has already is no new time
    assert offered[0] == later, offered
    assert (await desk.press(desk.adapter.last_buttons(GUEST)[0], GUEST)).accepted
    assert "Held for you" in desk.to(GUEST)[-1]  # the hold, too, lets it overlap itself
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert (await desk.press(approve, OWNER)).accepted
    assert desk.calendar is not None
    [after] = desk.calendar.ours()
    assert datetime.fromisoformat(after["start"]) == later and after["uid"] == old.uid


async def test_a_move_keeps_its_link_and_chooses_none_for_the_request(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(FRONTDESK_MEETING_LINK="jitsi")
    await book(desk)
    assert desk.calendar is not None
    [before] = desk.calendar.ours()
    care = desk.app.meetings.desk.aftercare
    assert care is not None
    link = care.extras.link(before["uid"])
    assert link is not None
    await press_reschedule(desk, OWNER)
    assert (await desk.press(desk.adapter.last_buttons(OWNER_CHAT)[0], OWNER)).accepted
    request = next(m for m in desk.app.meetings.store.listing() if m.status == "booked")
    assert request.uid == before["uid"] and care.extras.link(before["uid"]) == link
    assert care.extras.link(uid_for(request.id)) is None  # the request's own UID goes unused
    assert any(t.startswith("Moved:") and link in t for t in desk.to(GUEST))
