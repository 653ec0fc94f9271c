"""The Calendar beyond the corpus: URL fetch and cache, next hours, free/busy, zones."""

from __future__ import annotations

import http.server
import logging
import threading
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.calendar.ics import BUSY, Calendar, CalendarError, zone_named
from tests.calendar.conftest import ICS

SECRET_PATH = "/calendar/private-9f8e7d6c5b4a/basic.ics"


class FakeCalendarServer:
    """A loopback HTTP server that serves one .ics, or fails with 503 when told to."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.failing = False
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                status = 503 if outer.failing else 200
                payload = b"unavailable" if outer.failing else outer.body
                self.send_response(status)
                self.send_header("Content-Type", "text/calendar")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{SECRET_PATH}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[FakeCalendarServer]:
    fake = FakeCalendarServer((ICS / "issue_18_cancel_status.ics").read_bytes())
    yield fake
    fake.close()


def test_url_is_fetched_cached_and_the_cache_used_when_the_fetch_fails(
        server: FakeCalendarServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    window = (datetime(2020, 1, 29), datetime(2020, 1, 30))
    fresh = Calendar(server.url, tz="Europe/Berlin", cache_dir=tmp_path).events(*window)
    assert [e.status for e in fresh.events] == ["CANCELLED"]
    assert server.requests == 1
    server.failing = True
    with caplog.at_level(logging.WARNING, logger="frontdesk.calendar"):
        cached = Calendar(server.url, tz="Europe/Berlin", cache_dir=tmp_path).events(*window)
    assert cached.events == fresh.events
    assert server.requests == 2
    [record] = caplog.records
    assert "cached copy" in record.getMessage() and "HTTP 503" in record.getMessage()
    assert "private-9f8e7d6c5b4a" not in record.getMessage()


def test_url_failing_without_a_cache_is_a_clear_error(server: FakeCalendarServer,
                                                      tmp_path: Path) -> None:
    server.failing = True
    with pytest.raises(CalendarError, match="no cached copy") as raised:
        Calendar(server.url, tz="UTC", cache_dir=tmp_path).events(datetime(2020, 1, 1),
                                                                  datetime(2020, 1, 2))
    assert "private-9f8e7d6c5b4a" not in str(raised.value)


def test_url_is_not_refetched_within_max_age(server: FakeCalendarServer, tmp_path: Path) -> None:
    calendar = Calendar(server.url, tz="UTC", cache_dir=tmp_path, max_age=300.0)
    calendar.events(datetime(2020, 1, 1), datetime(2020, 1, 2))
    calendar.events(datetime(2020, 1, 2), datetime(2020, 1, 3))
    assert server.requests == 1


def test_next_hours_is_the_window_from_now(tmp_path: Path) -> None:
    calendar = Calendar(str(ICS / "machbar_16_feb_2019.ics"), tz="Europe/Berlin",
                        cache_dir=tmp_path)
    now = datetime(2019, 3, 10, 8, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    result = calendar.next_hours(4, now=now)
    assert len(result.events) == 1
    assert result.events == calendar.events(now, datetime(2019, 3, 10, 12, 0)).events


def test_busy_only_hides_titles_and_cancelled_occurrences(tmp_path: Path) -> None:
    calendar = Calendar(str(ICS / "tentative-apple-calendar.ics"), tz="America/Vancouver",
                        cache_dir=tmp_path)
    full = calendar.events(datetime(2022, 7, 1), datetime(2022, 7, 8))
    busy = full.busy_only()
    assert {e.summary for e in busy.events} == {BUSY}
    assert [(e.start, e.end) for e in busy.events] == [
        (e.start, e.end) for e in full.events if e.status != "CANCELLED"]
    assert any(e.status == "CANCELLED" for e in full.events)


def test_all_day_events_are_dates(tmp_path: Path) -> None:
    calendar = Calendar(str(ICS / "Germany_Holidays.ics"), tz="Europe/Berlin",
                        cache_dir=tmp_path)
    [event] = calendar.events(datetime(2019, 10, 3), datetime(2019, 10, 4)).events
    assert event.all_day and event.start == date(2019, 10, 3)
    assert not isinstance(event.start, datetime)


def test_windows_zone_names_and_bad_zones() -> None:
    assert zone_named("W. Europe Standard Time") == ZoneInfo("Europe/Berlin")
    with pytest.raises(CalendarError, match="unknown time zone"):
        zone_named("Mars/Olympus_Mons")


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CalendarError, match="cannot read the calendar"):
        Calendar(str(tmp_path / "none.ics"), tz="UTC", cache_dir=tmp_path).events(
            datetime(2020, 1, 1), datetime(2020, 1, 2))
