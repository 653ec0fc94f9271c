"""Every window of expected.json, read by our Calendar, against the reference answers."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.calendar.ics import Calendar, CalendarError
from tests.calendar.conftest import ICS, UNPARSEABLE, WINDOWS

READABLE = [w for w in WINDOWS if w["file"] != UNPARSEABLE]


def normalised(event: dict[str, Any], zone: str) -> tuple[Any, ...]:
    """The reference writes floating times without an offset; we read them in the zone."""
    def moment(text: str) -> date | datetime:
        if len(text) == 10:
            return date.fromisoformat(text)
        value = datetime.fromisoformat(text)
        return value.replace(tzinfo=ZoneInfo(zone)) if value.tzinfo is None else value

    return (event["summary"], moment(event["start"]), moment(event["end"]), event["all_day"],
            event["status"])


@pytest.mark.parametrize("window", READABLE,
                         ids=[f"{w['file']}@{w['window_start']}" for w in READABLE])
def test_window_matches_reference(window: dict[str, Any], tmp_path: Path) -> None:
    calendar = Calendar(str(ICS / window["file"]), tz=window["tz"], cache_dir=tmp_path)
    result = calendar.events(datetime.fromisoformat(window["window_start"]),
                             datetime.fromisoformat(window["window_end"]))
    got = [normalised(event.to_json(), window["tz"]) for event in result.events]
    assert got == [normalised(event, window["tz"]) for event in window["events"]]
    for event in result.events:  # every time is in the window's zone, with its offset
        if isinstance(event.start, datetime):
            assert event.start.utcoffset() == event.start.astimezone(
                ZoneInfo(window["tz"])).utcoffset()
    if "error" in window:
        assert len(result.skipped) == 1
        assert window["error"].split(":")[0] in result.skipped[0]
    else:
        assert result.skipped == []


def test_every_file_but_one_loads(tmp_path: Path) -> None:
    for path in sorted(ICS.glob("*.ics")):
        calendar = Calendar(str(path), tz="UTC", cache_dir=tmp_path)
        if path.name == UNPARSEABLE:
            with pytest.raises(CalendarError) as raised:
                calendar.events(datetime(2024, 6, 27), datetime(2024, 6, 28))
            message = str(raised.value)
            assert "\n" not in message and UNPARSEABLE in message and "parse" in message
        else:
            result = calendar.events(datetime(1990, 1, 1), datetime(2030, 1, 1))
            assert result.events or result.skipped, path.name


def test_skipped_series_names_the_event(tmp_path: Path) -> None:
    calendar = Calendar(str(ICS / "ms_timezones.ics"), tz="Europe/Berlin", cache_dir=tmp_path)
    result = calendar.events(datetime(2020, 9, 10), datetime(2020, 9, 11))
    assert result.skipped == [line for line in result.skipped if "\n" not in line]
    assert "Log Yesterday's Jira time" in result.skipped[0]
