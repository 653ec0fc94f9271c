"""The CalDAV calendar against a real server (Radicale on loopback), with the real client.

Reading: real-world calendars put on the server read the same as from the .ics (the reference
answers of expected.json), and busy time over the CalDAV copy merged with an .ics. Writing:
one event per UID whatever is retried, looked up, cancelled. Freshness: the background
refresh sees a new event; a message reads the copy without a request to the server.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.calendar.caldav import CalDavConfig, CalDavServer
from bot.calendar.caldav_copy import CalDavCalendar, MergedEvents
from bot.calendar.ics import Calendar
from bot.calendar.owner import OwnerCalendar
from bot.calendar.writer import Busy, CalendarUnavailable, CalendarWriter
from bot.config.settings import Settings
from tests.calendar.conftest import ICS, WINDOWS
from tests.calendar.test_corpus import normalised
from tests.fakes.radicale_server import RadicaleServer
from tests.support.harness import until

BERLIN = ZoneInfo("Europe/Berlin")
# Real-world files with what each brings: moved and cancelled occurrences, EXDATE, all-day
# and transparent events, Windows and other zones, a DST change inside a series.
THROUGH_CALDAV = ["issue_62_moved_event.ics",
                  "tentative-apple-calendar.ics", "issue_18_cancel_status.ics", "issue_48_dst.ics",
                  "issue_20_exdate_ignored.ics", "recurring_events_moved.ics"]


def vcalendar(*events: str) -> bytes:
    """A VCALENDAR around VEVENT bodies (CRLF lines, as a calendar app sends them)."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//caldav//EN"]
    for body in events:
        lines += ["BEGIN:VEVENT", "DTSTAMP:20240101T000000Z",
                  *[line.strip() for line in body.strip().splitlines()], "END:VEVENT"]
    return ("\r\n".join([*lines, "END:VCALENDAR"]) + "\r\n").encode()


def copy_of(server: RadicaleServer, url: str, tmp_path: Path, *,
            password: str | None = None, name: str | None = None) -> CalDavCalendar:
    config = CalDavConfig(url, name, server.username, password or server.password)
    return CalDavCalendar(CalDavServer(config, timeout_s=5), zone=BERLIN,
                          cache_dir=tmp_path / "cache")


@pytest.mark.parametrize("file", THROUGH_CALDAV)
def test_real_calendars_read_through_caldav_as_from_the_ics(
        file: str, radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    radicale.seed(url, (ICS / file).read_bytes())
    windows = [w for w in WINDOWS if w["file"] == file and "error" not in w]
    assert windows
    for window in windows:
        copy = CalDavCalendar(CalDavServer(CalDavConfig(url, None, radicale.username,
                                                        radicale.password)),
                              zone=ZoneInfo(window["tz"]), cache_dir=tmp_path)
        copy.refresh_now()
        result = copy.events(datetime.fromisoformat(window["window_start"]),
                             datetime.fromisoformat(window["window_end"]))
        got = [normalised(event.to_json(), window["tz"]) for event in result.events]
        assert got == [normalised(event, window["tz"]) for event in window["events"]], \
            window["why"]


BUSY_ON_CALDAV = [
    # the DST day (clocks forward at 02:00): an opaque all-day event blocks its 23 hours
    "UID:allday-dst\nSUMMARY:Moving house\nDTSTART;VALUE=DATE:20240331\n"
    "DTEND;VALUE=DATE:20240401",
    "UID:allday-free\nSUMMARY:Bank holiday\nTRANSP:TRANSPARENT\nDTSTART;VALUE=DATE:20240401\n"
    "DTEND;VALUE=DATE:20240402",
    "UID:cancelled\nSUMMARY:Called off\nSTATUS:CANCELLED\n"
    "DTSTART;TZID=Europe/Berlin:20240401T090000\nDTEND;TZID=Europe/Berlin:20240401T100000",
    "UID:new-york\nSUMMARY:Call with NY\n"
    "DTSTART;TZID=America/New_York:20240401T050000\n"
    "DTEND;TZID=America/New_York:20240401T060000",
]
DAILY_SERIES = [  # one object: the series, a cancelled and a moved occurrence, an EXDATE
    "UID:daily\nSUMMARY:Standup\nDTSTART;TZID=Europe/Berlin:20240325T140000\n"
    "DTEND;TZID=Europe/Berlin:20240325T150000\nRRULE:FREQ=DAILY;COUNT=10\n"
    "EXDATE;TZID=Europe/Berlin:20240330T140000",
    "UID:daily\nSUMMARY:Standup\nSTATUS:CANCELLED\nRECURRENCE-ID;TZID=Europe/Berlin:"
    "20240401T140000\nDTSTART;TZID=Europe/Berlin:20240401T140000\n"
    "DTEND;TZID=Europe/Berlin:20240401T150000",
    "UID:daily\nSUMMARY:Standup (moved)\nRECURRENCE-ID;TZID=Europe/Berlin:20240402T140000\n"
    "DTSTART;TZID=Europe/Berlin:20240402T160000\nDTEND;TZID=Europe/Berlin:20240402T170000",
]
BUSY_IN_ICS = [
    "UID:ics-1\nSUMMARY:Dentist\nDTSTART;TZID=Europe/Berlin:20240401T113000\n"
    "DTEND;TZID=Europe/Berlin:20240401T130000",
    "UID:ics-2\nSUMMARY:Run\nDTSTART:20240330T090000Z\nDTEND:20240330T093000Z",
]


def berlin(day: int, hour: int, minute: int = 0, month: int = 3) -> datetime:
    return datetime(2024, month, day, hour, minute, tzinfo=BERLIN)


def test_busy_over_caldav_and_ics_honours_transp_cancellations_and_dst(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    for body in BUSY_ON_CALDAV:
        radicale.put_event(url, vcalendar(body))
    radicale.put_event(url, vcalendar(*DAILY_SERIES))
    ics = tmp_path / "also.ics"
    ics.write_bytes(vcalendar(*BUSY_IN_ICS))
    settings = Settings.from_env({
        "FRONTDESK_HOME": str(tmp_path), "FRONTDESK_TIMEZONE": "Europe/Berlin",
        "FRONTDESK_CALENDAR": str(ics), "FRONTDESK_CALDAV_URL": url,
        "FRONTDESK_CALDAV_USERNAME": radicale.username,
        "FRONTDESK_CALDAV_PASSWORD": radicale.password})
    owner = OwnerCalendar.build(settings, Calendar(str(ics), tz="Europe/Berlin",
                                                   cache_dir=tmp_path))
    assert owner.caldav is not None and isinstance(owner.writer, MergedEvents)
    owner.caldav.refresh_now()

    busy = owner.busy(berlin(30, 0), berlin(3, 0, month=4))

    assert busy == [
        Busy(berlin(30, 10), berlin(30, 10, 30)),  # the .ics, given in UTC
        Busy(berlin(31, 0), berlin(1, 0, month=4)),  # all day, swallowing the 14:00 standup
        Busy(berlin(1, 11, month=4), berlin(1, 13, month=4)),  # New York's 05:00 + the .ics
        Busy(berlin(2, 16, month=4), berlin(2, 17, month=4)),  # the moved standup
    ]
    assert busy[1].end - busy[1].start == timedelta(hours=23)  # the DST day is 23 hours
    # the bank holiday is transparent, the 09:00 cancelled, the 1 April standup cancelled,
    # the 30 March one an EXDATE: none of them is busy time
    assert owner.busy(berlin(1, 0, month=4), berlin(1, 11, month=4)) == []


async def test_create_is_once_per_uid_then_exists_then_cancel(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    writer: CalendarWriter = MergedEvents(copy_of(radicale, url, tmp_path), None)
    event = vcalendar("UID:meeting-run-42@frontdesk\nSUMMARY:Meeting with Bob: budget\n"
                      "DTSTART:20240402T080000Z\nDTEND:20240402T083000Z")

    assert await writer.create("meeting-run-42@frontdesk", event) is True
    assert await writer.create("meeting-run-42@frontdesk", event) is False  # a retry
    assert len(radicale.objects(url)) == 1
    assert b"meeting-run-42@frontdesk" in radicale.objects(url)[0]
    assert await writer.exists("meeting-run-42@frontdesk") is True
    assert await writer.exists("never-made") is False
    # the copy was refreshed after the write: busy time shows the booking at once
    assert writer.busy(berlin(2, 0, month=4), berlin(3, 0, month=4)) == [
        Busy(berlin(2, 10, month=4), berlin(2, 10, 30, month=4))]

    assert await writer.cancel("meeting-run-42@frontdesk") is True
    assert await writer.cancel("meeting-run-42@frontdesk") is False
    assert radicale.objects(url) == []
    assert await writer.exists("meeting-run-42@frontdesk") is False
    assert writer.busy(berlin(2, 0, month=4), berlin(3, 0, month=4)) == []


async def test_busy_now_reads_the_server_busy_reads_the_copy(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    copy = copy_of(radicale, url, tmp_path)
    writer = MergedEvents(copy, None)
    copy.refresh_now()
    radicale.put_event(url, vcalendar("UID:added-elsewhere\nSUMMARY:Lunch\n"
                                      "DTSTART:20240402T110000Z\nDTEND:20240402T120000Z"))
    day = (berlin(2, 0, month=4), berlin(3, 0, month=4))

    asked = radicale.requests
    assert writer.busy(*day) == []  # the copy, not yet refreshed: no request made
    assert radicale.requests == asked
    assert await writer.busy_now(*day) == [Busy(berlin(2, 13, month=4), berlin(2, 14, month=4))]


async def test_the_background_refresh_picks_up_a_new_event(
        radicale: RadicaleServer, tmp_path: Path) -> None:
    url = radicale.new_calendar()
    copy = copy_of(radicale, url, tmp_path)
    refreshing = asyncio.create_task(copy.keep_fresh(every_s=0.05))
    try:
        await until(lambda: copy.current() is not None)
        radicale.put_event(url, vcalendar("UID:late\nSUMMARY:Late addition\n"
                                          "DTSTART:20240402T110000Z\nDTEND:20240402T120000Z"))
        await until(lambda: copy.busy(berlin(2, 0, month=4), berlin(3, 0, month=4)))
    finally:
        refreshing.cancel()
    # a restart reads the copy kept on disk before it reaches the server
    again = copy_of(radicale, url, tmp_path)
    assert [e.summary for e in again.events(berlin(2, 0, month=4),
                                             berlin(3, 0, month=4)).events] == ["Late addition"]




def test_a_server_down_is_one_log_line_and_the_copy_is_read(
        radicale: RadicaleServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = radicale.new_calendar()
    today = datetime.now(BERLIN).date()  # Berlin's today: at 23:30 UTC it is tomorrow there
    start = datetime.combine(today, datetime.min.time(), BERLIN) + timedelta(hours=12)
    radicale.put_event(url, vcalendar(
        f"UID:noon\nSUMMARY:Noon sync\nDTSTART;TZID=Europe/Berlin:{start:%Y%m%dT%H%M%S}\n"
        f"DTEND;TZID=Europe/Berlin:{start + timedelta(hours=1):%Y%m%dT%H%M%S}"))
    copy = copy_of(radicale, url, tmp_path)
    owner = OwnerCalendar(MergedEvents(copy, None), "Europe/Berlin")
    copy.refresh_now()
    assert "Noon sync" in owner.context({"is_owner": True})
    assert "unavailable" not in owner.context({"is_owner": True})

    radicale.stop()
    try:
        caplog.set_level("WARNING", logger="frontdesk.calendar")
        for _ in range(3):
            with pytest.raises(CalendarUnavailable, match="cannot reach the CalDAV server"):
                copy.refresh_now()
        context = owner.context({"is_owner": False})
    finally:
        radicale.start()
    down = [r for r in caplog.records if "calendar unavailable" in r.getMessage()]
    assert len(down) == 1  # three failed refreshes, one line
    assert "calendar unavailable since" in context and "busy" in context  # the copy, free/busy
    assert "Noon sync" not in context

    copy.refresh_now()
    assert [r.getMessage() for r in caplog.records][-1].startswith("calendar available again")
    assert "unavailable" not in owner.context({"is_owner": True})


def test_never_read_and_unreachable_is_calendar_unavailable(tmp_path: Path) -> None:
    config = CalDavConfig("http://127.0.0.1:9/owner/cal/", None, "owner", "pw-123456")
    copy = CalDavCalendar(CalDavServer(config, timeout_s=2), zone=BERLIN,
                          cache_dir=tmp_path)
    owner = OwnerCalendar(MergedEvents(copy, None), "Europe/Berlin", caldav=copy)
    with pytest.raises(CalendarUnavailable):
        copy.refresh_now()
    assert owner.context({"is_owner": True}) == "Calendar unavailable."
    with pytest.raises(CalendarUnavailable):
        owner.busy(berlin(1, 0), berlin(2, 0))
