"""A calendar a server sent, read within bounds: hostile series skipped at once, a huge file
refused with one line, the ordinary events still listed."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import ics
from bot.calendar.ics import Calendar, CalendarError

ZONE = ZoneInfo("Europe/Berlin")
HOSTILE = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//hostile//EN
BEGIN:VEVENT
UID:never
SUMMARY:Never
DTSTART:20250101T000000Z
DTEND:20250101T000001Z
RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30
END:VEVENT
BEGIN:VEVENT
UID:every-second
SUMMARY:Every second since 1970
DTSTART:19700101T000000Z
DTEND:19700101T000001Z
RRULE:FREQ=SECONDLY
END:VEVENT
BEGIN:VEVENT
UID:dentist
SUMMARY:Dentist
DTSTART:20251201T090000Z
DTEND:20251201T100000Z
END:VEVENT
END:VCALENDAR
"""


def test_series_that_never_happen_or_repeat_every_second_are_skipped_at_once(
        tmp_path: Path) -> None:
    path = tmp_path / "hostile.ics"
    path.write_text(HOSTILE.replace("\n", "\r\n"))
    calendar = Calendar(str(path), tz="Europe/Berlin", cache_dir=tmp_path)
    started = time.monotonic()
    result = calendar.events(datetime(2025, 12, 1, tzinfo=ZONE), datetime(2025, 12, 2,
                                                                           tzinfo=ZONE))
    assert time.monotonic() - started < 3.0  # unbounded: hours (every second since 1970)
    assert [e.summary for e in result.events] == ["Dentist"]
    assert len(result.skipped) == 2
    assert "'Never'" in result.skipped[0] and "can never happen" in result.skipped[0]
    assert "'Every second since 1970'" in result.skipped[1]
    assert "repeats too often" in result.skipped[1]


def test_a_calendar_file_past_the_size_limit_is_refused_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ics, "MAX_ICS_BYTES", 1024)
    path = tmp_path / "huge.ics"
    path.write_text(HOSTILE + " " * 2048)
    calendar = Calendar(str(path), tz="Europe/Berlin", cache_dir=tmp_path)
    with pytest.raises(CalendarError) as refused:
        calendar.events(datetime(2025, 12, 1, tzinfo=ZONE), datetime(2025, 12, 2, tzinfo=ZONE))
    assert "larger than" in str(refused.value) and "\n" not in str(refused.value)
