"""The guest's invitation (iTIP REQUEST / CANCEL), the stored attendee, the video link and the
reminders before a meeting, through the gateway with the folder calendar."""

from __future__ import annotations

from pathlib import Path

import icalendar
import pytest

from bot.meetings.aftercare import still_to_fire
from bot.meetings.link import new_link
from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, SECOND_GUEST, Desk, DeskFactory
from tests.support.harness import make_settings


def calendar_of(data: bytes) -> icalendar.Calendar:
    return icalendar.Calendar.from_ical(data)


async def book(desk: Desk) -> None:
    offer = await desk.send("/meet budget review")
    assert (await desk.press(offer.buttons[0], GUEST)).accepted
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert (await desk.press(approve, OWNER)).accepted


async def test_the_guest_gets_a_request_and_the_calendar_a_client_scheduled_attendee(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(FRONTDESK_OWNER_EMAIL="ann@example.org",
                           FRONTDESK_MEETING_LINK="jitsi")
    await book(desk)
    [(chat, sent)] = desk.adapter.files
    invite = calendar_of(sent.data)
    assert chat == GUEST and str(invite["METHOD"]) == "REQUEST"
    [event] = invite.walk("VEVENT")
    assert str(event["ORGANIZER"]) == "mailto:ann@example.org"
    assert event["ATTENDEE"].params["CN"] == "Bob *bold*"
    assert "SCHEDULE-AGENT" not in event["ATTENDEE"].params  # only the stored copy has it
    assert int(event["SEQUENCE"]) == 0 and event.get("DTSTAMP") is not None
    assert desk.calendar is not None
    [stored] = desk.calendar.ours()
    on_server = calendar_of(stored["ics"].encode())
    assert "METHOD" not in on_server
    [kept] = on_server.walk("VEVENT")
    assert kept["ATTENDEE"].params["SCHEDULE-AGENT"] == "CLIENT"
    assert str(kept["UID"]) == str(event["UID"])
    link = str(kept["LOCATION"])
    assert link.startswith("https://meet.jit.si/Frontdesk-") and len(link.split("-")[-1]) >= 20
    assert str(kept["URL"]) == link and link in str(kept["DESCRIPTION"])
    assert str(event["LOCATION"]) == link
    assert any(t.startswith("Booked:") and link in t for t in desk.to(GUEST))


async def test_without_an_address_the_organizer_is_a_name_on_a_urn(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    await book(desk)
    [(_, sent)] = desk.adapter.files
    [event] = calendar_of(sent.data).walk("VEVENT")
    assert str(event["ORGANIZER"]).startswith("urn:uuid:")
    assert event["ORGANIZER"].params["CN"] == "Frontdesk owner"
    assert "LOCATION" not in event  # FRONTDESK_MEETING_LINK is off by default


async def test_reminders_are_set_for_guest_and_owner_and_a_cancel_drops_them(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(FRONTDESK_MEETING_REMIND="1d,15m",
                           FRONTDESK_MEETING_LINK="https://meet.example.org/{uid}")
    await book(desk)
    [meeting] = desk.app.meetings.store.listing()
    reminders = desk.app.reminders.store.pending_sources(f"meeting:{meeting.uid}:")
    assert meeting.slot is not None
    # NOTICE is 1 hour in these tests: 1d before is already past, 15m is not
    assert sorted(r.scope for r in reminders) == ["owner", f"telegram:{GUEST}"]
    assert all(r.kind == "meeting" for r in reminders)
    guest_one = next(r for r in reminders if r.scope != "owner")
    assert guest_one.text.startswith("Reminder: budget review with the owner in 15 minutes")
    assert "https://meet.example.org/frontdesk-meeting-" in guest_one.text
    assert abs(guest_one.due_at - (meeting.slot.start.timestamp() - 900)) < 1
    assert still_to_fire(desk.app.reminders.store, meeting.uid) == ["15m"]
    listing = await desk.send("/meetings")
    cancel = next(b for b in listing.buttons if b.label.startswith("Cancel"))
    assert (await desk.press(cancel, GUEST)).accepted
    assert desk.app.reminders.store.pending_sources(f"meeting:{meeting.uid}:") == []
    cancelled = [f for chat, f in desk.adapter.files if f.name.startswith("cancelled-")]
    assert len(cancelled) == 1
    assert str(calendar_of(cancelled[0].data)["METHOD"]) == "CANCEL"
    [event] = calendar_of(cancelled[0].data).walk("VEVENT")
    assert str(event["STATUS"]) == "CANCELLED" and str(event["UID"]) == meeting.uid


@pytest.mark.parametrize("value", ["zoom", "https://meet.example.org/room", "ftp://x/{uid}"])
def test_a_bad_link_setting_names_the_variable(value: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="FRONTDESK_MEETING_LINK"):
        make_settings(tmp_path, FRONTDESK_MEETING_LINK=value)


def test_a_bad_remind_setting_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="FRONTDESK_MEETING_REMIND"):
        make_settings(tmp_path, FRONTDESK_MEETING_REMIND="soon")


def test_jitsi_rooms_carry_at_least_80_random_bits() -> None:
    rooms = {new_link("jitsi", "u").rsplit("-", 1)[-1] for _ in range(50)}
    assert len(rooms) == 50 and all(len(room) * 4 >= 80 for room in rooms)


async def test_meetings_json_has_the_link_sequence_and_reminders(make_desk: DeskFactory) -> None:
    from bot.cli.meetings import with_extras
    from bot.meetings.extras import MeetingExtras
    from bot.reminders.store import Reminders

    desk = await make_desk(FRONTDESK_MEETING_LINK="jitsi")
    await book(desk)
    [meeting] = desk.app.meetings.store.listing()
    row = with_extras(meeting, MeetingExtras(desk.app.db), Reminders(desk.app.db))
    assert row["link"].startswith("https://meet.jit.si/") and row["sequence"] == 0
    assert row["reminders"] == ["15m"] and row["guest_zone"] is None
    assert row["uid"] == meeting.uid


async def test_meetings_json_shows_the_guests_own_zone(make_desk: DeskFactory,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    import argparse
    import json

    from bot.cli.meetings import main

    desk = await make_desk()
    assert (await desk.send("/timezone Tokyo")).text.startswith("Noted")
    await book(desk)
    await desk.send("/meet another one", user=SECOND_GUEST)  # a guest who never said
    capsys.readouterr()
    assert main(argparse.Namespace(json=True), desk.app.settings) == 0
    rows = {row["guest_id"]: row for row in json.loads(capsys.readouterr().out)}
    booked = rows[f"telegram:{GUEST}"]
    assert booked["guest_zone"] == "Asia/Tokyo" and booked["status"] == "booked"
    assert rows[f"telegram:{SECOND_GUEST}"]["guest_zone"] is None


async def test_the_invitation_is_named_by_the_guests_own_date(make_desk: DeskFactory) -> None:
    from datetime import datetime

    from bot.meetings.zones import parse_zone

    desk = await make_desk()  # the owner's zone: UTC, the hours 08:00-20:00
    offer = await desk.send("/meet budget review")
    request = desk.app.meetings.store.listing()[0]
    start = datetime.fromisoformat(desk.app.flows.runs.load(request.run_id).get("slots")[0]
                                   ["start"])
    zone_name = "UTC+14" if start.hour >= 10 else "UTC-12"  # a day apart from UTC's date
    zone = parse_zone(zone_name)
    assert zone is not None and start.astimezone(zone).date() != start.date()
    assert (await desk.send(f"/timezone {zone_name}")).text.startswith("Noted")
    assert (await desk.press(offer.buttons[0], GUEST)).accepted
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    assert (await desk.press(approve, OWNER)).accepted
    [(_, sent)] = desk.adapter.files
    assert sent.name == f"meeting-{start.astimezone(zone):%Y-%m-%d}.ics"


def test_a_guest_who_wrote_by_mail_is_invited_at_their_address(tmp_path: Path) -> None:
    """Their chat is their address: the ATTENDEE is mailto: it, on the invitation and the
    stored event alike (a guest on Telegram has none: a name on a urn)."""
    from datetime import UTC, datetime

    from bot.meetings.aftercare import Aftercare
    from bot.meetings.extras import MeetingExtras
    from bot.meetings.invitation import invitation, stored_event
    from bot.meetings.store import Meeting
    from bot.schema import open_database

    care = Aftercare(MeetingExtras(open_database(tmp_path / "f.db")), UTC)
    start = datetime(2026, 12, 9, 15, tzinfo=UTC)

    def meeting(platform: str, chat: str) -> Meeting:
        return Meeting(id="m1", run_id="r1", status="booked", guest=f"{platform}:x",
                       guest_name="Bob", platform=platform, chat_id=chat, topic="budget",
                       start=start, end=start.replace(minute=30), hold_until=None, uid="u1",
                       note="")

    by_mail = meeting("email", "bob@example.org")
    for ics in (invitation(by_mail, care.parts("u1", by_mail), 0.0),
                stored_event(by_mail, care.parts("u1", by_mail), 0.0)):
        [event] = calendar_of(ics).walk("VEVENT")
        assert str(event["ATTENDEE"]) == "mailto:bob@example.org"
    on_telegram = meeting("telegram", "43")
    [event] = calendar_of(invitation(on_telegram, care.parts("u1", on_telegram), 0.0)) \
        .walk("VEVENT")
    assert str(event["ATTENDEE"]).startswith("urn:uuid:")
