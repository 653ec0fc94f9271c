"""`frontdesk agenda` from the outside: the JSON contract, stderr, defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tests.calendar.conftest import ICS, UNPARSEABLE, WINDOWS
from tests.support.child_process import clean_env


def agenda(tmp_path: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    """Run the real console entry point in a clean directory and environment."""
    base = clean_env("TZ", FRONTDESK_HOME=str(tmp_path / "home"))  # TZ: the machine's zone too
    return subprocess.run([sys.executable, "-m", "bot.cli.main", "agenda", *args], cwd=tmp_path,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=60)


def window(file: str, start: str) -> dict[str, Any]:
    return next(w for w in WINDOWS if w["file"] == file and w["window_start"] == start)


def test_json_contract_with_a_skipped_series(tmp_path: Path) -> None:
    w = window("ms_timezones.ics", "2020-09-10T00:00:00+02:00")
    done = agenda(tmp_path, "--calendar", str(ICS / w["file"]), "--start", w["window_start"],
                  "--end", w["window_end"], "--tz", w["tz"], "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == w["events"]
    [line] = done.stderr.splitlines()
    assert "skipped broken series" in line and "Log Yesterday's Jira time" in line


def test_floating_times_get_the_window_offset_and_sort_with_the_rest(tmp_path: Path) -> None:
    w = window("tripit-location-escaping.ics", "2011-10-11T00:00:00-07:00")
    done = agenda(tmp_path, "--calendar", str(ICS / w["file"]), "--start", w["window_start"],
                  "--end", w["window_end"], "--tz", w["tz"], "--json")
    events = json.loads(done.stdout)
    assert [e["summary"] for e in events] == [e["summary"] for e in w["events"]]
    assert events[2]["start"] == "2011-10-11T10:05:00-07:00"  # floating in the reference
    assert events[0]["start"] == "2011-10-11" and events[0]["all_day"] is True
    assert done.stderr == ""


def test_default_window_is_today_in_frontdesk_timezone(tmp_path: Path) -> None:
    zone = "Pacific/Auckland"
    today = datetime.now(ZoneInfo(zone)).date()
    ics = tmp_path / "today.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:1\r\nSUMMARY:Standup\r\nDTSTART:{today:%Y%m%d}T093000\r\n"
        f"DTEND:{today:%Y%m%d}T094500\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    done = agenda(tmp_path, "--json", env={"FRONTDESK_CALENDAR": str(ics),
                                           "FRONTDESK_TIMEZONE": zone})
    [event] = json.loads(done.stdout)
    expected = datetime(today.year, today.month, today.day, 9, 30, tzinfo=ZoneInfo(zone))
    assert event == {"summary": "Standup", "start": expected.isoformat(),
                     "end": expected.replace(minute=45).isoformat(), "all_day": False,
                     "status": None}


def test_machine_zone_when_no_timezone_is_set(tmp_path: Path) -> None:
    w = window("issue_18_cancel_status.ics", "2020-01-29T00:00:00+01:00")
    done = agenda(tmp_path, "--calendar", str(ICS / w["file"]), "--start",
                  "2020-01-30T06:00", "--end", "2020-01-30T06:30", "--json",
                  env={"TZ": "Asia/Tokyo"})  # naive bounds are read in the machine's zone
    [event] = json.loads(done.stdout)
    assert event["start"].endswith("+09:00")
    assert datetime.fromisoformat(event["start"]) == datetime.fromisoformat(
        w["events"][0]["start"])
    assert event["status"] == "CANCELLED"


def test_unparseable_file_is_one_line_on_stderr(tmp_path: Path) -> None:
    done = agenda(tmp_path, "--calendar", str(ICS / UNPARSEABLE), "--json")
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert UNPARSEABLE in line


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    ics = str(ICS / "issue_18_cancel_status.ics")
    for args in (["--start", "tomorrow"], ["--tz", "Nowhere/Land"],
                 ["--start", "2020-01-02", "--end", "2020-01-01"]):
        done = agenda(tmp_path, "--calendar", ics, *args)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, args
    assert "FRONTDESK_CALENDAR" in agenda(tmp_path).stderr


def test_text_output_lists_events(tmp_path: Path) -> None:
    done = agenda(tmp_path, "--calendar", str(ICS / "issue_18_cancel_status.ics"),
                  "--start", "2020-01-29", "--tz", "Europe/Berlin")
    assert done.returncode == 0
    assert "[CANCELLED]" in done.stdout and "2020-01-29" in done.stdout


def test_url_falls_back_to_the_cache_with_a_warning(tmp_path: Path) -> None:
    from tests.calendar.test_calendar import FakeCalendarServer

    server = FakeCalendarServer((ICS / "issue_18_cancel_status.ics").read_bytes())
    try:
        args = ("--calendar", server.url, "--start", "2020-01-29", "--tz", "Europe/Berlin",
                "--json")
        fresh = agenda(tmp_path, *args)
        server.failing = True
        cached = agenda(tmp_path, *args)
    finally:
        server.close()
    assert fresh.returncode == cached.returncode == 0
    assert json.loads(cached.stdout) == json.loads(fresh.stdout) != []
    [line] = cached.stderr.splitlines()
    assert "using the cached copy" in line and "private" not in line
