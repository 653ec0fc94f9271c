"""A reschedule and a cancel end to end: `frontdesk run` as a subprocess (the real
python-telegram-bot against the fake Bot API, the real caldav client against Radicale).

A guest books, presses **Reschedule** under `/meetings`, picks a new time and the owner
approves: the same event (same UID) is moved on the server with SEQUENCE + 1 and is still the
only one of ours, its attendee marked ``SCHEDULE-AGENT=CLIENT``; the guest gets the updated
invitation (``METHOD:REQUEST``, the higher SEQUENCE) and each side is told once. The owner then
cancels: the event is gone and the guest gets ``METHOD:CANCEL`` with ``STATUS:CANCELLED``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import icalendar

from tests.adapters.telegram.test_adapter_approvals import press, tokens
from tests.end_to_end.test_meeting_on_radicale import OWN_EVENT, caldav_env, the_event
from tests.fakes.radicale_server import RadicaleServer
from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

GUEST = ALLOWED[0]


def calendar_of(data: bytes) -> icalendar.Calendar:
    return icalendar.Calendar.from_ical(data)


def new_message(telegram: FakeTelegramServer, chat: int, seen: int,
                found: Callable[[SentMessage], bool]) -> Callable[[], SentMessage | None]:
    """The first message to ``chat`` after the first ``seen`` that ``found`` accepts."""
    return lambda: next((m for m in telegram.messages_to(chat)[seen:] if found(m)), None)


def with_button(label: str) -> Callable[[SentMessage], bool]:
    return lambda m: m.reply_markup is not None and any(
        key.startswith(label) for key in tokens(m))


def button(message: SentMessage, label: str) -> str:
    return next(data for key, data in tokens(message).items() if key.startswith(label))


def ours(radicale: RadicaleServer, url: str) -> list[bytes]:
    return [data for data in radicale.objects(url) if b"frontdesk-meeting-" in data]


def test_a_reschedule_moves_the_same_event_and_a_cancel_withdraws_it(
        telegram: FakeTelegramServer, radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    radicale.put_event(url, OWN_EVENT)
    bot = FrontdeskProcess(telegram, tmp_path, env={
        **caldav_env(radicale, url),
        "FRONTDESK_OWNER_EMAIL": "ann@example.org", "FRONTDESK_WRITES_PER_SECOND": "1000"})
    bot.start()
    try:
        bot.poll(lambda: list((tmp_path / "cache").glob("caldav-*.json")))  # the copy is read
        telegram.push_message(GUEST, GUEST, "/meet budget")
        offer = bot.wait(new_message(telegram, GUEST, 0, with_button("None of these")))
        press(telegram, bot, GUEST, offer, next(iter(tokens(offer).values())))
        asked = bot.wait(new_message(telegram, OWNER, 0, with_button("Approve")))
        press(telegram, bot, OWNER, asked, tokens(asked)["Approve"])
        booked = bot.wait(new_message(telegram, GUEST, 0, lambda m: m.text.startswith("Booked:")))
        bot.wait(new_message(telegram, OWNER, 0, lambda m: m.text.startswith("Booked:")))
        [before] = ours(radicale, url)

        # Reschedule from /meetings: new times, the old one kept until the owner approves.
        seen_guest, seen_owner = len(telegram.messages_to(GUEST)), len(telegram.messages_to(OWNER))
        telegram.push_message(GUEST, GUEST, "/meetings")
        listing = bot.wait(new_message(telegram, GUEST, seen_guest, with_button("Reschedule")))
        press(telegram, bot, GUEST, listing, button(listing, "Reschedule"))
        moving = bot.wait(new_message(telegram, GUEST, seen_guest + 1,
                                      with_button("None of these")))
        assert "stays booked" in moving.text, moving.text
        picked = next(iter(tokens(moving)))
        press(telegram, bot, GUEST, moving, tokens(moving)[picked])
        asked = bot.wait(new_message(telegram, OWNER, seen_owner, with_button("Approve")))
        assert ours(radicale, url) == [before]  # still the old time, until approved
        press(telegram, bot, OWNER, asked, tokens(asked)["Approve"])
        moved = bot.wait(new_message(telegram, GUEST, seen_guest,
                                     lambda m: m.text.startswith("Moved:")))
        bot.wait(new_message(telegram, OWNER, seen_owner, lambda m: m.text.startswith("Moved:")))
        [after] = ours(radicale, url)

        # The owner cancels it: the guest's calendar is told to drop the same UID.
        seen_guest, seen_owner = len(telegram.messages_to(GUEST)), len(telegram.messages_to(OWNER))
        telegram.push_message(OWNER, OWNER, "/meetings")
        listing = bot.wait(new_message(telegram, OWNER, seen_owner, with_button("Cancel")))
        press(telegram, bot, OWNER, listing, button(listing, "Cancel"))
        cancelled = bot.wait(new_message(telegram, GUEST, seen_guest,
                                         lambda m: m.document is not None))
        bot.poll(lambda: not ours(radicale, url))
    finally:
        bot.stop()

    first, moved_to = the_event(before), the_event(after)
    uid = str(first["UID"])
    assert str(moved_to["UID"]) == uid
    assert int(moved_to["SEQUENCE"]) == int(first["SEQUENCE"]) + 1
    assert moved_to.decoded("DTSTART") != first.decoded("DTSTART")
    assert picked.split()[-1] in moved.text  # the time the guest picked
    assert moved_to["ATTENDEE"].params["SCHEDULE-AGENT"] == "CLIENT"
    assert "METHOD" not in calendar_of(after)  # the stored copy is an event, not a message

    assert booked.document is not None and moved.document is not None
    updated = calendar_of(moved.document.data)
    assert str(updated["METHOD"]) == "REQUEST"
    [invited] = updated.walk("VEVENT")
    assert str(invited["UID"]) == uid
    assert int(invited["SEQUENCE"]) == int(the_event(booked.document.data)["SEQUENCE"]) + 1
    assert invited.decoded("DTSTART") == moved_to.decoded("DTSTART")
    assert str(invited["ORGANIZER"]) == "mailto:ann@example.org"

    assert sum(m.text.startswith("Moved:") for m in telegram.messages_to(GUEST)) == 1
    assert sum(m.text.startswith("Moved:") for m in telegram.messages_to(OWNER)) == 1

    assert cancelled.document is not None and "cancelled" in cancelled.text
    withdrawn = calendar_of(cancelled.document.data)
    assert str(withdrawn["METHOD"]) == "CANCEL"
    [gone] = withdrawn.walk("VEVENT")
    assert str(gone["UID"]) == uid and str(gone["STATUS"]) == "CANCELLED"
    assert len(radicale.objects(url)) == 1  # the owner's own event only
