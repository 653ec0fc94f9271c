"""The meeting flow through the gateway: /meet, a slot pressed, the owner's Approve, one event."""

from __future__ import annotations

from datetime import UTC, datetime

import icalendar

from bot.calendar.writer import Busy, CalendarUnavailable
from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, SECOND_GUEST, DeskFactory


async def test_a_guest_books_through_meet_and_the_owners_approve(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet the budget")
    labels = [b.label for b in offer.buttons]
    assert len(labels) == 4 and labels[-1] == "None of these", offer.text
    assert "UTC" in offer.text and "the budget" in offer.text
    picked = await desk.press(offer.buttons[0], GUEST)
    assert picked.accepted
    assert any(t.startswith("Held for you") for t in desk.to(GUEST))
    question = desk.owner_texts()[-1]
    assert "Bob \\*bold\\*" in question and "telegram id 200" in question
    assert "“the budget”" in question
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    pressed = await desk.press(approve, OWNER)
    assert pressed.accepted
    assert desk.calendar is not None and len(desk.calendar.ours()) == 1
    booked = [t for t in desk.to(GUEST) if t.startswith("Booked:")]
    assert len(booked) == 1
    [(chat, ics)] = desk.adapter.files  # the guest's Booked carries the event; CalDAV: no more
    assert chat == GUEST and ics.mime == "text/calendar"
    assert str(only_event(ics.data)["UID"]) == desk.calendar.ours()[0]["uid"]
    assert any(t.startswith("Booked:") for t in desk.owner_texts())
    rows = [m.to_json() for m in desk.app.meetings.store.listing()]
    assert [r["status"] for r in rows] == ["booked"]
    assert rows[0]["uid"] == desk.calendar.ours()[0]["uid"]


async def test_none_of_these_offers_the_next_three_forward_in_time(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    first = await desk.send("/meet")
    pressed = await desk.press(first.buttons[-1], GUEST)
    assert pressed.accepted
    second = desk.adapter.last_buttons(GUEST)
    assert [b.label for b in second][-1] == "None of these"
    starts = [m for m in desk.app.flows.store.events(first.run_id or "")
              if m.get("node") == "offer" and m["event"] == "node_end"]
    assert len(starts) == 2
    firsts = {b.label for b in first.buttons[:-1]}
    assert not firsts & {b.label for b in second[:-1]}


async def test_two_guests_pick_the_same_slot_one_holds_it_the_other_gets_new_times(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    bob = await desk.send("/meet budget", GUEST)
    ann = await desk.send("/meet roadmap", SECOND_GUEST)
    assert bob.buttons[0].label == ann.buttons[0].label  # the same first free slot
    assert (await desk.press(bob.buttons[0], GUEST)).accepted
    assert (await desk.press(ann.buttons[0], SECOND_GUEST)).accepted
    again = desk.to(SECOND_GUEST)[-1]
    assert again.startswith("Sorry, that time is not free any more"), again
    assert bob.buttons[0].label not in [b.label for b in desk.adapter.last_buttons(SECOND_GUEST)]
    statuses = {m.guest: m.status for m in desk.app.meetings.store.listing()}
    assert statuses == {f"telegram:{GUEST}": "held", f"telegram:{SECOND_GUEST}": "offered"}


async def test_a_slot_taken_meanwhile_is_a_conflict_and_a_new_request(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    held = desk.app.meetings.store.listing()[0]
    assert desk.calendar is not None and held.slot is not None
    desk.calendar.take(held.slot.start, held.slot.end)  # someone else's event, meanwhile
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert (await desk.press(approve, OWNER)).accepted
    assert desk.calendar.ours() == []
    assert "create" not in desk.calendar.calls()
    rows = desk.app.meetings.store.listing()
    assert sorted(m.status for m in rows) == ["conflict", "offered"]
    assert desk.to(GUEST)[-1].startswith("Sorry, that time is not free any more")
    assert desk.adapter.last_buttons(GUEST)[-1].label == "None of these"
    assert any(t.startswith("Not booked:") for t in desk.owner_texts())


async def test_the_calendar_down_at_approve_is_retried_then_given_up_visibly(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    assert desk.calendar is not None
    desk.calendar.set_down(True)
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    owner = desk.owner_texts()
    assert sum("cannot be reached" in t for t in owner) == 1  # told once that it is pending
    assert any(t.startswith("I gave up booking") for t in owner)
    assert desk.calendar.calls().count("exists") == 5  # every try looked first; none wrote
    assert "create" not in desk.calendar.calls() and desk.calendar.ours() == []
    assert desk.app.meetings.store.listing()[0].status == "expired"
    assert "not booked" in desk.to(GUEST)[-1]


async def test_the_calendar_back_during_the_retries_books_once(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    assert desk.calendar is not None
    calendar = desk.calendar
    calendar.set_down(True)
    real_exists = calendar.exists
    tries = 0

    async def back_on_third(uid: str) -> bool:
        nonlocal tries
        tries += 1
        if tries == 3:
            calendar.set_down(False)
        return await real_exists(uid)

    calendar.exists = back_on_third  # type: ignore[method-assign]
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    assert len(calendar.ours()) == 1 and calendar.calls().count("create") == 1
    assert [t for t in desk.to(GUEST) if t.startswith("Booked:")]


async def test_decline_tells_the_guest_kindly_and_frees_the_slot(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    decline = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Decline")
    assert (await desk.press(decline, OWNER)).accepted
    assert desk.to(GUEST)[-1].startswith("Sorry, the owner can't make that time")
    assert desk.app.meetings.store.listing()[0].status == "declined"
    assert desk.app.meetings.store.taken() == []


async def test_no_answer_within_the_hold_expires_and_tells_the_guest(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    import time

    assert await desk.app.chat.gateway.expire(time.time() + 25 * 3600) == 1
    assert "expired" in desk.to(GUEST)[-1]
    assert desk.app.meetings.store.listing()[0].status == "expired"
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert not (await desk.press(approve, OWNER)).accepted


async def test_only_the_owner_approves_and_only_the_guest_picks(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    assert not (await desk.press(offer.buttons[0], SECOND_GUEST)).accepted  # not theirs
    await desk.press(offer.buttons[0], GUEST)
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert not (await desk.press(approve, GUEST)).accepted
    assert desk.calendar is not None and desk.calendar.ours() == []


async def test_one_open_request_per_guest(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    await desk.send("/meet budget")
    second = await desk.send("/meet roadmap")
    assert second.buttons == [] and "open already" in second.text


async def test_meetings_lists_a_guests_bookings_and_cancel_deletes_once(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    listed = await desk.send("/meetings")
    assert listed.text.startswith("Upcoming meetings:") and len(listed.buttons) == 2
    assert (await desk.send("/meetings", SECOND_GUEST)).buttons == []  # not theirs
    assert not (await desk.press(listed.buttons[0], SECOND_GUEST)).accepted
    assert (await desk.press(listed.buttons[0], GUEST)).accepted
    assert not (await desk.press(listed.buttons[0], GUEST)).accepted  # once
    assert desk.calendar is not None and desk.calendar.ours() == []
    assert desk.calendar.calls().count("cancel") == 1
    assert desk.app.meetings.store.listing()[0].status == "cancelled"
    assert any("cancelled the meeting" in t for t in desk.owner_texts())
    assert (await desk.send("/meetings", OWNER)).buttons == []


async def test_without_caldav_the_owner_gets_the_event_to_add_by_hand(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(caldav=False)
    offer = await desk.send("/meet budget")
    await desk.press(offer.buttons[0], GUEST)
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    by_hand = [t for t in desk.owner_texts() if "add the attached event to your calendar" in t]
    assert len(by_hand) == 1 and "BEGIN:" not in by_hand[0]  # the event is a file, not text
    booked = desk.app.meetings.store.listing()[0]
    assert booked.status == "booked" and booked.start is not None and booked.uid
    name = f"meeting-{booked.start.astimezone(UTC):%Y-%m-%d}.ics"
    files = {chat: file for chat, file in desk.adapter.files}
    assert set(files) == {OWNER_CHAT, GUEST}  # the owner's to add, the guest's with Booked
    for file in files.values():
        assert file.name == name and file.mime == "text/calendar"
        event = only_event(file.data)
        assert str(event["UID"]) == booked.uid
        assert str(event["SUMMARY"]) == "Meeting with Bob *bold*: budget"
    assert desk.to(GUEST)[-1].startswith("Booked:")  # the file's caption


async def test_a_calendar_never_read_says_it_is_being_read_never_no_free_time(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(busy=NeverRead())
    desk.app.meetings.desk.first_read_s = 0.3  # the wait for a first read, shortened
    offer = await desk.send("/meet the budget")
    assert offer.route != "failed"
    assert "still being read" in offer.text and "no free time" not in offer.text, offer.text
    assert [b.label for b in offer.buttons] in ([], ["None of these"])
    again = await desk.send("/meet the budget")
    assert "open already" not in again.text  # the request was closed: ask again at once


async def test_a_meet_while_the_calendar_is_first_read_waits_for_the_read(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(busy=ReadOnThirdLook())
    offer = await desk.send("/meet the budget")
    labels = [b.label for b in offer.buttons]
    assert len(labels) == 4 and labels[-1] == "None of these", offer.text


class NeverRead:
    """A calendar copy that has never been read (the CalDAV server down since the start)."""

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        raise CalendarUnavailable("never read")


class ReadOnThirdLook:
    """A calendar copy whose first read (at start) finishes while an offer waits for it."""

    def __init__(self) -> None:
        self.looks = 0

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        self.looks += 1
        if self.looks < 3:
            raise CalendarUnavailable("not read yet")
        return []


def only_event(ics: bytes) -> icalendar.Event:
    """The one VEVENT of an .ics file, parsed by icalendar."""
    events = icalendar.Calendar.from_ical(ics).walk("VEVENT")
    assert len(events) == 1
    return events[0]
