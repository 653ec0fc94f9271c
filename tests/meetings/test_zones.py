"""A guest's time zone: asked once, taken from their words, used in the offer's buttons, in
Booked and in /meetings; /timezone changes it and a bad zone names examples."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.meetings.zones import ASK, format_for_guest, parse_zone, zone_in_words
from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, DeskFactory

BERLIN = ZoneInfo("Europe/Berlin")


def test_zones_are_read_from_names_cities_and_offsets() -> None:
    assert str(parse_zone("new york")) == "America/New_York"
    assert str(parse_zone("Europe/Paris")) == "Europe/Paris"
    assert str(parse_zone("San Francisco")) == "America/Los_Angeles"
    assert parse_zone("UTC+2") is not None and parse_zone("UTC+2").tzname(None) == "UTC+02:00"
    assert parse_zone("Narnia") is None and parse_zone("UTC+30") is None
    assert str(zone_in_words("Hi, I'm in Tokyo this month")) == "Asia/Tokyo"
    assert zone_in_words("I'm in a meeting") is None


def test_the_guests_time_comes_first_and_the_owners_beside_it() -> None:
    start = datetime(2026, 12, 8, 10, tzinfo=BERLIN)
    end = datetime(2026, 12, 8, 10, 30, tzinfo=BERLIN)
    assert format_for_guest(start, end, parse_zone("UTC+7"), BERLIN) == \
        "Tue 8 Dec 16:00–16:30 your time (10:00 in Berlin)"
    assert format_for_guest(start, end, None, BERLIN) == "Tue 8 Dec 10:00–10:30 (Europe/Berlin)"
    assert format_for_guest(start, end, parse_zone("Paris"), BERLIN) == \
        "Tue 8 Dec 10:00–10:30 (Europe/Berlin)"  # the same clock: shown once


async def test_a_zone_asked_once_taken_from_words_and_used(make_desk: DeskFactory) -> None:
    desk = await make_desk()  # the owner's zone: UTC
    first = await desk.send("/meet budget")
    assert ASK in first.text
    noted = await desk.send("I'm in Tokyo")
    assert noted.text.startswith("Noted: your time zone is Asia/Tokyo"), noted.text
    assert (await desk.press(first.buttons[-1], GUEST)).accepted  # None of these: new page
    page = desk.adapter.last_buttons(GUEST)
    request = desk.app.meetings.store.listing()[0]
    slots = desk.app.flows.runs.load(request.run_id).get("slots")
    tokyo = datetime.fromisoformat(slots[0]["start"]).astimezone(ZoneInfo("Asia/Tokyo"))
    assert page[0].label == f"{tokyo:%a} {tokyo.day} {tokyo:%b %H:%M}"
    assert "your time, Asia/Tokyo" in desk.to(GUEST)[-1] and ASK not in desk.to(GUEST)[-1]
    await desk.press(page[0], GUEST)
    assert "for the guest, in Tokyo" in desk.owner_texts()[-1]
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    await desk.press(approve, OWNER)
    [booked] = [t for t in desk.to(GUEST) if t.startswith("Booked:")]
    assert f"{tokyo:%H:%M}" in booked and "your time (" in booked and " in UTC)" in booked
    listed = await desk.send("/meetings")
    assert "your time" in listed.text
    assert (await desk.send("/timezone Narnia")).text.startswith("I don't know the time zone")
    changed = await desk.send("/timezone UTC+2")
    assert "UTC+02:00" in changed.text
    assert desk.app.meetings.desk.guest_zone(f"telegram:{GUEST}") is not None
