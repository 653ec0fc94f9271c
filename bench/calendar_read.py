"""Bench the triage's calendar read with CalDAV configured while the server answers slowly.

Usage: ``.venv/bin/python bench/calendar_read.py [--delay 0.5] [--reads 400]``.

A real CalDAV server (Radicale, ``tests/fakes/radicale_server.py``) on loopback holds a busy
owner's calendar: weekly and daily series with moved and cancelled occurrences, an all-day
event, events in other zones, and a few dozen single meetings, with an .ics merged in. Every
request to the server then waits ``--delay`` seconds. The bot's calendar is built as
``frontdesk run`` builds it (``OwnerCalendar.build``) and its background refresh runs all along
(every 0.2 s, so a refresh is nearly always under way), while a new event is put on the server
every 50 reads (the copy changes, so some reads expand the calendar afresh). Each read is
what ``check_calendar`` does for a message: ``OwnerCalendar.context(sender)`` in a worker
thread, timed from the event loop; the owner and a guest alternate. Beside each, a no-op in a
worker thread gives the machine's own noise at that moment. A second series, after it, reads
a window that changes every time (the ``agenda`` tool's next hours: never a cached answer).

The reference, measured in the same run: one read from the server itself (a fresh
connection's full fetch), which is what a read that waited on the network would cost. Target:
p95 of the triage's read ≤ 50 ms whatever the server's delay (exit status 1 when missed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.calendar.caldav import CalDavConfig, CalDavServer  # noqa: E402
from bot.calendar.ics import Calendar  # noqa: E402
from bot.calendar.owner import OwnerCalendar  # noqa: E402
from bot.config.settings import Settings  # noqa: E402
from tests.fakes.radicale_server import RadicaleServer  # noqa: E402

TARGET_P95_MS = 50.0
OWNER, GUEST = {"is_owner": True}, {"is_owner": False}


def owner_calendar(now: datetime, singles: int) -> bytes:
    """A busy owner's calendar around ``now``: series with exceptions, zones, all-day, singles."""
    day = now.date()
    stamp = "DTSTAMP:20240101T000000Z"

    def at(offset_days: int, hour: int, minute: int = 0) -> str:
        return f"{day + timedelta(days=offset_days):%Y%m%d}T{hour:02d}{minute:02d}00"

    events = [
        ["UID:standup", "SUMMARY:Standup", f"DTSTART;TZID=Europe/Berlin:{at(-200, 9, 30)}",
         f"DTEND;TZID=Europe/Berlin:{at(-200, 9, 45)}", "RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR",
         f"EXDATE;TZID=Europe/Berlin:{at(1, 9, 30)}"],
        ["UID:standup", "SUMMARY:Standup (moved)", f"RECURRENCE-ID;TZID=Europe/Berlin:"
         f"{at(2, 9, 30)}", f"DTSTART;TZID=Europe/Berlin:{at(2, 11)}",
         f"DTEND;TZID=Europe/Berlin:{at(2, 11, 15)}"],
        ["UID:standup", "SUMMARY:Standup", "STATUS:CANCELLED",
         f"RECURRENCE-ID;TZID=Europe/Berlin:{at(3, 9, 30)}",
         f"DTSTART;TZID=Europe/Berlin:{at(3, 9, 30)}", f"DTEND;TZID=Europe/Berlin:{at(3, 9, 45)}"],
        ["UID:one-on-one", "SUMMARY:1:1 with Ana", f"DTSTART;TZID=Europe/Berlin:{at(-90, 15)}",
         f"DTEND;TZID=Europe/Berlin:{at(-90, 15, 30)}", "RRULE:FREQ=WEEKLY;INTERVAL=1"],
        ["UID:ny-sync", "SUMMARY:NY sync", f"DTSTART;TZID=America/New_York:{at(-60, 10)}",
         f"DTEND;TZID=America/New_York:{at(-60, 11)}", "RRULE:FREQ=WEEKLY;BYDAY=TU,TH"],
        ["UID:offsite", "SUMMARY:Offsite", f"DTSTART;VALUE=DATE:{day + timedelta(days=4):%Y%m%d}",
         f"DTEND;VALUE=DATE:{day + timedelta(days=6):%Y%m%d}"],
        ["UID:focus", "SUMMARY:Focus time", "TRANSP:TRANSPARENT",
         f"DTSTART;TZID=Europe/Berlin:{at(-30, 13)}", f"DTEND;TZID=Europe/Berlin:{at(-30, 14)}",
         "RRULE:FREQ=DAILY"],
    ]
    for n in range(singles):
        offset = n % 21 - 7
        events.append([f"UID:single-{n}", f"SUMMARY:Meeting {n}",
                       f"DTSTART:{at(offset, 7 + n % 9)}Z", f"DTEND:{at(offset, 8 + n % 9)}Z"])
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//calendar read//EN"]
    for body in events:
        lines += ["BEGIN:VEVENT", stamp, *body, "END:VEVENT"]
    return ("\r\n".join([*lines, "END:VCALENDAR"]) + "\r\n").encode()


def late_event(now: datetime, n: int) -> bytes:
    """One new meeting today, as another calendar app would add it."""
    start = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=n % 5)
    return ("\r\n".join([
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//calendar read//EN", "BEGIN:VEVENT",
        f"UID:late-{n}", "DTSTAMP:20240101T000000Z", f"SUMMARY:Added late {n}",
        f"DTSTART:{start:%Y%m%dT%H%M%S}Z", f"DTEND:{start + timedelta(minutes=30):%Y%m%dT%H%M%S}Z",
        "END:VEVENT", "END:VCALENDAR"]) + "\r\n").encode()


def nothing() -> None:
    """The no-op a worker thread runs for the floor: a thread hop and nothing else."""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def timed(call: object, *args: object) -> float:
    """Milliseconds a call takes in a worker thread, seen from the event loop."""
    started = time.perf_counter()
    await asyncio.to_thread(call, *args)  # type: ignore[arg-type]
    return (time.perf_counter() - started) * 1000


class ServerProcess:
    """Radicale in a process of its own (as a real server is), on a fixed port and folder."""

    def __init__(self, root: Path, port: int, delay_s: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.radicale_server", str(root), str(port),
             str(delay_s)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()  # printed once it listens

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def bench(delay_s: float, reads: int, root: Path) -> int:
    now = datetime.now(UTC)
    port = free_port()
    fast = ServerProcess(root / "radicale", port, 0.0)  # seeding and the first copy
    server = RadicaleServer(root / "radicale", port=port)  # its helpers, over HTTP
    slow: ServerProcess | None = None
    try:
        url = server.new_calendar("Work")
        server.seed(url, owner_calendar(now, singles=40))
        ics = root / "also.ics"
        ics.write_bytes(owner_calendar(now, singles=10).replace(b"UID:", b"UID:ics-"))
        settings = Settings.from_env({
            "FRONTDESK_HOME": str(root / "home"), "FRONTDESK_TIMEZONE": "Europe/Berlin",
            "FRONTDESK_CALENDAR": str(ics), "FRONTDESK_CALDAV_URL": url,
            "FRONTDESK_CALDAV_USERNAME": server.username,
            "FRONTDESK_CALDAV_PASSWORD": server.password})
        owner = OwnerCalendar.build(settings, Calendar(str(ics), tz="Europe/Berlin",
                                                       cache_dir=root / "cache"))
        assert owner.caldav is not None and owner.calendar is not None
        owner.caldav.refresh_now()  # the first copy (at start, the disk copy plays this part)
        fast.stop()
        slow = ServerProcess(root / "radicale", port, delay_s)  # from now on, every request

        started = time.perf_counter()
        CalDavServer(CalDavConfig(url, None, server.username, server.password)).fetch()
        direct_ms = (time.perf_counter() - started) * 1000

        refreshing = asyncio.create_task(owner.caldav.keep_fresh(every_s=0.2))
        context_ms, window_ms, hop_ms = [], [], []
        try:
            for n in range(reads):
                if n % 50 == 25:  # the owner's calendar changes elsewhere, slowly seen
                    await asyncio.to_thread(server.put_event, url, late_event(now, n))
                hop_ms.append(await timed(nothing))  # the machine's own noise, same moment
                context_ms.append(await timed(owner.context, OWNER if n % 2 else GUEST))
            for n in range(reads // 4):
                later = datetime.now(UTC) + timedelta(minutes=n)
                window_ms.append(await timed(owner.calendar.next_hours, 8.0, later))
        finally:
            refreshing.cancel()
    finally:
        (slow or fast).stop()

    p95 = percentile(context_ms, 0.95)
    print(f"server delay per request:      {delay_s * 1000:8.0f} ms  (Radicale in its own "
          "process, refreshing every 0.2 s)")
    print(f"reference, one server read:    {direct_ms:8.1f} ms  (a fresh full fetch)")
    print(f"triage read (context), {reads} reads: median {statistics.median(context_ms):6.2f} "
          f"ms, p95 {p95:6.2f} ms, max {max(context_ms):7.2f} ms")
    print(f"floor, a no-op in a worker thread: median {statistics.median(hop_ms):6.2f} ms, "
          f"p95 {percentile(hop_ms, 0.95):6.2f} ms (load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs)")
    print(f"agenda tool (a new window each): median {statistics.median(window_ms):6.2f} ms, "
          f"p95 {percentile(window_ms, 0.95):6.2f} ms, max {max(window_ms):7.2f} ms")
    print(f"p95 / server read: {p95 / direct_ms:.4f}; target p95 <= {TARGET_P95_MS:.0f} ms: "
          + ("met" if p95 <= TARGET_P95_MS else "MISSED"))
    return 0 if p95 <= TARGET_P95_MS else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per server request")
    parser.add_argument("--reads", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        return asyncio.run(bench(args.delay, args.reads, Path(root)))


if __name__ == "__main__":
    sys.exit(main())
