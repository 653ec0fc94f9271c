"""A meeting end to end on a real calendar: `frontdesk run` as a subprocess (the real
python-telegram-bot against the fake Bot API, the real caldav client against Radicale). The
guest types /meet, presses a time, the owner presses Approve; the event is then on the
Radicale server exactly once, and the guest's "Booked" carries the same event as a file."""

from __future__ import annotations

from pathlib import Path

import icalendar

from tests.adapters.telegram.test_adapter_approvals import press, tokens
from tests.fakes.radicale_server import RadicaleServer
from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

GUEST = ALLOWED[0]
OWN_EVENT = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//The owner's own calendar app//EN\r
BEGIN:VEVENT\r
UID:dentist-2020@example.org\r
DTSTAMP:20200101T000000Z\r
DTSTART:20200110T090000Z\r
DTEND:20200110T100000Z\r
SUMMARY:Dentist\r
END:VEVENT\r
END:VCALENDAR\r
"""


def caldav_env(radicale: RadicaleServer, url: str) -> dict[str, str]:
    """The bot's settings for meetings on the Radicale calendar ``url``, any hour of the day."""
    return {"FRONTDESK_MEETING_HOURS": "Mon-Sun 08:00-20:00", "FRONTDESK_CALDAV_URL": url,
            "FRONTDESK_CALDAV_USERNAME": radicale.username,
            "FRONTDESK_CALDAV_PASSWORD": radicale.password}


def the_event(data: bytes) -> icalendar.Event:
    [event] = icalendar.Calendar.from_ical(data).walk("VEVENT")
    return event


def test_a_guest_books_on_telegram_and_the_event_is_on_radicale_once(
        telegram: FakeTelegramServer, radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    radicale.put_event(url, OWN_EVENT)  # the owner's own: the copy is kept on disk once read
    bot = FrontdeskProcess(telegram, tmp_path, env=caldav_env(radicale, url))
    bot.start()
    try:
        bot.poll(lambda: list((tmp_path / "cache").glob("caldav-*.json")))  # the copy is read
        telegram.push_message(GUEST, GUEST, "/meet budget")
        offer = bot.replies(GUEST, 1)[-1]
        first = next(iter(tokens(offer)))
        press(telegram, bot, GUEST, offer, tokens(offer)[first])

        def approval() -> SentMessage | None:
            return next((m for m in telegram.messages_to(OWNER)
                         if m.reply_markup and "Approve" in tokens(m)), None)

        asked = bot.wait(approval)
        press(telegram, bot, OWNER, asked, tokens(asked)["Approve"])
        booked = bot.wait(lambda: next((m for m in telegram.messages_to(GUEST)
                                        if m.text.startswith("Booked:")), None))
        told = bot.wait(lambda: next((m for m in telegram.messages_to(OWNER)
                                      if m.text.startswith("Booked:")), None))
    finally:
        bot.stop()
    assert first.split()[-1] in booked.text  # the time the guest picked
    ours = [data for data in radicale.objects(url) if b"frontdesk-meeting-" in data]
    assert len(ours) == 1 and len(radicale.objects(url)) == 2  # and the owner's own event
    on_server = the_event(ours[0])
    assert str(on_server["SUMMARY"]) == "Meeting with User 43: budget"
    uid = str(on_server["UID"])
    assert uid.startswith("frontdesk-meeting-") and uid in told.text
    assert booked.document is not None and booked.document.content_type == "text/calendar"
    assert booked.document.file_name.startswith("meeting-")
    sent = the_event(booked.document.data)
    assert str(sent["UID"]) == uid and sent.decoded("DTSTART") == on_server.decoded("DTSTART")
    assert not any(m.document for m in telegram.messages_to(OWNER))  # CalDAV: no file to add
    assert radicale.password not in bot.log()


def test_a_meet_owed_from_downtime_is_offered_times_once_the_calendar_is_read(
        telegram: FakeTelegramServer, radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    radicale.put_event(url, OWN_EVENT)
    telegram.push_message(GUEST, GUEST, "/meet budget")  # sent while the bot was down
    bot = FrontdeskProcess(telegram, tmp_path, env=caldav_env(radicale, url))
    bot.start()
    try:
        offer = bot.replies(GUEST, 1)[-1]
    finally:
        bot.stop()
    assert "no free time" not in offer.text, offer.text
    assert list(tokens(offer))[-1] == "None of these" and len(tokens(offer)) == 4
