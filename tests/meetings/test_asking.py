"""Asking in words: the offline model starts the meeting workflow through propose_meeting, and
the rules hold whatever a tool call sends (a forged slot is refused at Hold)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config.meeting_hours import parse_hours
from bot.meetings.desk import MeetingDesk
from bot.meetings.slots import MeetingRules
from bot.meetings.store import MeetingStore
from bot.models.meeting_phrases import meeting_arguments
from bot.schema import open_database
from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, DeskFactory
from tests.meetings.fake_calendar import FolderCalendar


def test_the_offline_rule_knows_a_request_to_meet_from_a_question_about_meetings() -> None:
    assert meeting_arguments("can we meet next week about the budget?") == {
        "topic": "the budget"}
    assert meeting_arguments("Could you book a 45 min call about hiring?") == {
        "topic": "hiring", "minutes": 45}
    assert meeting_arguments("what meetings do I have today?") is None
    assert meeting_arguments("thanks for the meeting yesterday") is None


async def test_a_guest_asking_in_words_gets_the_slots_as_buttons(make_desk: DeskFactory) -> None:
    desk = await make_desk(offline=True)
    reply = await desk.send("can we meet next week about the budget?")
    assert reply.route == "full_agent", reply
    assert "pick one of the buttons" in reply.text
    offer = desk.adapter.last_buttons(GUEST)
    assert offer[-1].label == "None of these" and len(offer) == 4
    assert any("“the budget”" in t for t in desk.to(GUEST))
    await desk.press(offer[0], GUEST)
    assert "“the budget”" in desk.owner_texts()[-1]
    assert [b.label for b in desk.adapter.last_buttons(OWNER_CHAT)] == ["Approve", "Decline"]


async def test_a_forged_slot_outside_the_rules_is_refused_at_hold(tmp_path: Path) -> None:
    calendar = FolderCalendar(tmp_path / "calendar")
    zone = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 6, 10, 8, tzinfo=UTC).timestamp()  # a Wednesday, 10:00 in Berlin
    rules = MeetingRules(parse_hours("H", None), zone)
    store = MeetingStore(open_database(tmp_path / "f.db"), clock=lambda: now)

    async def tell(origin: str, key: str, text: str) -> None:
        raise AssertionError("nothing to tell")

    desk = MeetingDesk(store, rules, calendar, calendar, tell, clock=lambda: now)
    guest = {"scope": "telegram:200", "is_owner": False, "platform": "telegram",
             "chat_id": "200", "name": "Bob"}
    assert desk.open("r1", "r1", {"topic": "x", "sender": guest}) is None

    def at(day: int, hour: int, minute: int = 0) -> dict[str, str]:
        start = datetime(2026, 6, day, hour, minute, tzinfo=zone)
        return {"start": start.isoformat(),
                "end": (start + timedelta(minutes=30)).isoformat()}

    assert desk.hold("r1", at(11, 23)) == "that time is outside the meeting hours"
    assert "notice" in str(desk.hold("r1", at(10, 11)))
    assert "ahead" in str(desk.hold("r1", at(30, 10)))
    calendar.take(datetime(2026, 6, 11, 10, 35, tzinfo=zone),
                  datetime(2026, 6, 11, 11, tzinfo=zone))
    assert desk.hold("r1", at(11, 10)) == "that time is not free any more"  # the buffer
    assert desk.hold("r1", at(11, 9)) is None
    assert [m.status for m in store.listing()] == ["held"]


async def test_move_it_cancels_the_booking_and_offers_new_times(make_desk: DeskFactory) -> None:
    desk = await make_desk(offline=True)
    offer = await desk.send("/meet the budget")
    await desk.press(offer.buttons[0], GUEST)
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    assert desk.calendar is not None and len(desk.calendar.ours()) == 1
    reply = await desk.send("please move it to Thursday")
    assert "pick one of the buttons" in reply.text, reply.text
    assert desk.calendar.ours() == []
    statuses = sorted(m.status for m in desk.app.meetings.store.listing())
    assert statuses == ["cancelled", "offered"]
    assert desk.adapter.last_buttons(GUEST)[-1].label == "None of these"
    assert any("to move it" in t for t in desk.owner_texts())
    new = next(m for m in desk.app.meetings.store.listing() if m.status == "offered")
    assert new.topic == "the budget"


async def test_the_owner_asking_for_themself_books_without_a_second_question(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet with Bob about hiring", OWNER)
    await desk.press(offer.buttons[0], OWNER)
    assert desk.calendar is not None and len(desk.calendar.ours()) == 1
    assert [m.status for m in desk.app.meetings.store.listing()] == ["booked"]
    assert not any("Approve or Decline" in t for t in desk.owner_texts())
