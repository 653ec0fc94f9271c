"""A meeting on Telegram, end to end: `frontdesk run` as a subprocess against the fake Bot API,
with no writable calendar (the .ics path): the guest's /meet, their press on a time, the
owner's Approve, the guest's "Booked" with the event's .ics attached, the owner's .ics file to
add by hand (both uploaded by the real python-telegram-bot as multipart sendDocument)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import icalendar
import pytest

from tests.adapters.telegram.test_adapter_approvals import edited, press, tokens
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

GUEST = ALLOWED[0]


@pytest.fixture
def bot(telegram: FakeTelegramServer, tmp_path: Path) -> Iterator[FrontdeskProcess]:
    process = FrontdeskProcess(telegram, tmp_path,
                               env={"FRONTDESK_MEETING_HOURS": "Mon-Sun 08:00-20:00"})
    process.start()
    yield process
    process.stop()


def test_a_guest_books_a_meeting_on_telegram(telegram: FakeTelegramServer,
                                             bot: FrontdeskProcess) -> None:
    telegram.push_message(GUEST, GUEST, "/meet the budget")
    offer = bot.replies(GUEST, 1)[-1]
    labels = list(tokens(offer))
    assert len(labels) == 4 and labels[-1] == "None of these", offer.text
    assert "the budget" in offer.text
    # Someone else's press on the guest's time is refused; the guest's own is taken.
    assert "Only the owner" in str(press(telegram, bot, ALLOWED[1], offer,
                                         tokens(offer)[labels[0]]).get("text"))
    press(telegram, bot, GUEST, offer, tokens(offer)[labels[0]])
    assert edited(telegram, bot, offer).edits
    asked = bot.replies(OWNER, 1)[-1]
    assert list(tokens(asked)) == ["Approve", "Decline"] and "the budget" in asked.text
    press(telegram, bot, OWNER, asked, tokens(asked)["Approve"])
    booked = bot.wait(lambda: next((m for m in telegram.messages_to(GUEST)
                                    if m.text.startswith("Booked:")), None))
    assert labels[0].split()[-1] in booked.text  # the start time the guest picked
    by_hand = bot.wait(lambda: next((m for m in telegram.messages_to(OWNER)
                                     if m.document is not None), None))
    assert "add the attached event" in by_hand.text  # the file's caption
    for message in (booked, by_hand):  # the guest's Booked carries the same event
        assert message.document is not None
        assert message.document.file_name.startswith("meeting-")
        assert message.document.file_name.endswith(".ics")
        assert message.document.content_type == "text/calendar"
        [event] = icalendar.Calendar.from_ical(message.document.data).walk("VEVENT")
        assert str(event["UID"]).startswith("frontdesk-meeting-")
        assert str(event["SUMMARY"]) == "Meeting with User 43: the budget"
    assert booked.document is not None and by_hand.document is not None
    guest_file = icalendar.Calendar.from_ical(booked.document.data)
    owner_file = icalendar.Calendar.from_ical(by_hand.document.data)
    assert str(guest_file["METHOD"]) == "REQUEST"  # the guest's is an invitation (iTIP)
    [invited] = guest_file.walk("VEVENT")
    [stored] = owner_file.walk("VEVENT")
    for field in ("UID", "SEQUENCE", "DTSTART", "DTEND"):  # one event, one UID
        assert invited[field].to_ical() == stored[field].to_ical()
