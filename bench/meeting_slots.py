"""Meeting slots bench: free-slot computation over a year-long busy calendar (target ≤ 20 ms).

Usage:
    .venv/bin/python bench/meeting_slots.py                  # 2,600 busy stretches, seed 1
    .venv/bin/python bench/meeting_slots.py --events 5000 --repeat 200

A year of busy time in Europe/Berlin (both DST changes inside): ten events a working day,
between 15 minutes and 3 hours long, plus all-day blocks, seeded. Each round computes one
offer the way the desk does — the next three free slots under the default rules
(Mon–Fri 09:00–17:00, 30 minutes, 10 minutes' buffer, 4 hours' notice, 14 days, 4 a day) —
from the whole year of busy stretches, sorted as ``BusyTime.busy`` gives them (the worst
case: the desk asks only for the horizon), and, the heaviest query, the last page of the
horizon (the slots after the 13th day). Also timed, as the reference of the same run:
reading each stretch's start as POSIX seconds once, what any computation that converts the
stretches must pay. Printed: median and p95 in milliseconds, and the ratio to the reference.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.calendar.writer import Busy
from bot.config.meeting_hours import parse_hours
from bot.meetings.slots import MeetingRules, free_slots

TARGET_MS = 20.0


def year_of_busy(events: int, seed: int, start: datetime) -> list[Busy]:
    """``events`` busy stretches over a year from ``start``, most on working hours."""
    rng = random.Random(seed)
    busy = []
    for _ in range(events):
        day = start + timedelta(days=rng.randrange(365))
        at = day.replace(hour=rng.randrange(7, 19), minute=rng.choice((0, 15, 30, 45)))
        busy.append(Busy(at, at + timedelta(minutes=rng.choice((15, 30, 45, 60, 90, 180)))))
    for _ in range(events // 50):  # all-day blocks
        day = start + timedelta(days=rng.randrange(365))
        midnight = day.replace(hour=0, minute=0)
        busy.append(Busy(midnight, midnight + timedelta(days=1)))
    return busy


def timed(fn: object, repeat: int) -> list[float]:
    """Milliseconds per call, ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - began) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2600)
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    zone = ZoneInfo("Europe/Berlin")
    rules = MeetingRules(parse_hours("FRONTDESK_MEETING_HOURS", None), zone)
    year_start = datetime(2026, 1, 1, tzinfo=zone)
    busy = year_of_busy(args.events, args.seed, year_start)
    now = datetime(2026, 3, 20, 8, tzinfo=UTC)  # the offer's horizon spans the March change
    last_page = now + timedelta(days=13)
    busy.sort()  # as ``BusyTime.busy`` gives it

    first = timed(lambda: free_slots(rules, busy, [], now), args.repeat)
    late = timed(lambda: free_slots(rules, busy, [], now, after=last_page), args.repeat)
    reference = timed(lambda: [b.start.timestamp() for b in busy], args.repeat)
    found = free_slots(rules, busy, [], now)
    ref = statistics.median(reference)
    print(f"busy stretches: {len(busy)} over a year; first offer: "
          + ", ".join(f"{s.start.astimezone(zone):%a %d %b %H:%M}" for s in found))
    for name, times in (("first page", first), ("last page", late)):
        p95 = statistics.quantiles(times, n=20)[18]
        print(f"{name:<10} median {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  "
              f"({statistics.median(times) / ref:4.2f}× reading each stretch's start once, "
              f"{ref:.2f} ms)  target ≤ {TARGET_MS:.0f} ms: "
              f"{'met' if p95 <= TARGET_MS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
