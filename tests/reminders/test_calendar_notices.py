"""Calendar notices (FRONTDESK_REMIND_BEFORE): one per occurrence; moved and cancelled follow."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from bot.adapters.telegram.markdown import markdown_to_html
from tests.reminders.conftest import DeskFactory, berlin
from tests.support.harness import OWNER_CHAT

STAMP = "%Y%m%dT%H%M%SZ"


def write_calendar(path: Path, *events: tuple[str, datetime | date, datetime | date, str]) -> Path:
    """An .ics file with (summary, start, end, status) events, times in UTC, dates all day."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//frontdesk tests//EN"]
    for n, (summary, start, end, status) in enumerate(events):
        if isinstance(start, datetime) and isinstance(end, datetime):
            when = [f"DTSTART:{start.astimezone(UTC):{STAMP}}",
                    f"DTEND:{end.astimezone(UTC):{STAMP}}"]
        else:
            when = [f"DTSTART;VALUE=DATE:{start:%Y%m%d}", f"DTEND;VALUE=DATE:{end:%Y%m%d}"]
        lines += ["BEGIN:VEVENT", f"UID:notice-{n}@frontdesk", "DTSTAMP:20251201T000000Z",
                  *when, f"SUMMARY:{summary}", *([f"STATUS:{status}"] if status else []),
                  "END:VEVENT"]
    path.write_text("\r\n".join([*lines, "END:VCALENDAR", ""]), encoding="utf-8")
    return path


async def test_a_notice_per_event_moved_with_it_none_for_cancelled_or_all_day(
        make_desk: DeskFactory, tmp_path: Path) -> None:
    ics = tmp_path / "cal.ics"
    budget = ("Budget review with Ann", berlin(2025, 12, 1, 14, 0), berlin(2025, 12, 1, 15, 0),
              "")
    write_calendar(ics, budget, ("Yoga", berlin(2025, 12, 1, 13, 0),
                                 berlin(2025, 12, 1, 14, 0), "CANCELLED"),
                   ("Holiday", date(2025, 12, 1), date(2025, 12, 2), ""))
    desk = await make_desk(berlin(2025, 12, 1, 12, 0), FRONTDESK_CALENDAR=str(ics),
                           FRONTDESK_REMIND_BEFORE="15")
    scheduler = desk.services.timer
    assert await scheduler.sync_calendar() == (1, 0)
    [notice] = desk.services.reminders.store.pending()
    assert notice.due_local == "2025-12-01T13:45:00+01:00"
    assert await scheduler.sync_calendar() == (0, 0)  # read again: still one

    moved = ("Budget review with Ann", berlin(2025, 12, 1, 16, 0), berlin(2025, 12, 1, 17, 0),
             "")
    write_calendar(ics, moved)
    desk.at(berlin(2025, 12, 1, 12, 5))
    assert await scheduler.sync_calendar() == (0, 1)  # its old notice goes
    desk.at(berlin(2025, 12, 1, 14, 0))  # the calendar is read two hours ahead of a notice
    assert await scheduler.sync_calendar() == (1, 0)
    [notice] = desk.services.reminders.store.pending()
    assert notice.due_local == "2025-12-01T15:45:00+01:00"

    desk.at(berlin(2025, 12, 1, 15, 45))
    await scheduler.sync_calendar()
    assert len(await scheduler.tick()) == 1
    assert desk.adapter.to(OWNER_CHAT) == ["In 15 min: Budget review with Ann, 16:00–17:00"]
    assert await scheduler.sync_calendar() == (0, 0)  # sent: never added again

    write_calendar(ics, moved, ("Dentist", berlin(2025, 12, 1, 17, 0),
                                berlin(2025, 12, 1, 18, 0), ""))
    await scheduler.sync_calendar()
    write_calendar(ics, moved, ("Dentist", berlin(2025, 12, 1, 17, 0),
                                berlin(2025, 12, 1, 18, 0), "CANCELLED"))
    desk.at(berlin(2025, 12, 1, 15, 50))
    assert await scheduler.sync_calendar() == (0, 1)
    desk.at(berlin(2025, 12, 1, 16, 45))
    assert await scheduler.tick() == []
    assert desk.adapter.to(OWNER_CHAT) == ["In 15 min: Budget review with Ann, 16:00–17:00"]


async def test_an_invitations_title_is_shown_literally_in_its_notice(
        make_desk: DeskFactory, tmp_path: Path) -> None:
    ics = write_calendar(tmp_path / "cal.ics", (
        "Sync [open](https://evil.example) **now**", berlin(2025, 12, 1, 14, 0),
        berlin(2025, 12, 1, 15, 0), ""))
    desk = await make_desk(berlin(2025, 12, 1, 13, 0), FRONTDESK_CALENDAR=str(ics),
                           FRONTDESK_REMIND_BEFORE="15")
    assert await desk.services.timer.sync_calendar() == (1, 0)
    desk.at(berlin(2025, 12, 1, 13, 45))
    assert len(await desk.services.timer.tick()) == 1
    [notice] = desk.adapter.to(OWNER_CHAT)
    html = markdown_to_html(notice)  # as Telegram shows it: no link, no bold of theirs
    assert "<a " not in html and "<b>" not in html
    assert "[open](https://evil.example) **now**" in html
