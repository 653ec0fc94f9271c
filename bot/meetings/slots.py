"""The owner's meeting rules, and the free slots they leave between the busy stretches.

``free_slots`` lists the next free starts (pages go forward in time); ``why_not`` checks one
slot against every rule on its own (hours, notice, horizon, buffers, other guests' holds, the
per-day cap): the workflow calls it at Hold and at Book, so no model and no guest can book
outside the rules. Every time is an aware datetime; the rules are read in the owner's zone
(``zoneinfo``, so a DST day's hours are that day's wall-clock hours, and a start that does not
exist on the clock that day is skipped).

The interval arithmetic is written here: what it needs is a sort-and-sweep merge of the busy
stretches (widened by the buffer) and a ``bisect`` lookup per candidate, a dozen lines.
dateutil has no interval sets; the maintained interval library (portion) would do the merge
with an object per stretch and per operation, where the 20 ms budget over a year-long calendar
(``bench/meeting_slots.py``) wants plain sorted lists. ``why_not`` checks the same rules by a
plain loop, and the Hypothesis tests hold the two against each other.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from itertools import pairwise
from typing import Any

from bot.calendar.writer import Busy
from bot.config.meeting_hours import WeeklyHours
from bot.config.settings import Settings

GRID_MIN = 15  # candidate starts lie on a quarter-hour grid from each range's start


@dataclass(frozen=True)
class MeetingRules:
    """The FRONTDESK_MEETING_* settings, with the owner's zone."""

    hours: WeeklyHours
    zone: tzinfo
    minutes: int = 30
    buffer: int = 10
    notice_h: float = 4.0
    days: int = 14
    per_day: int = 4
    hold_h: float = 24.0

    @classmethod
    def from_settings(cls, settings: Settings, zone: tzinfo) -> MeetingRules:
        return cls(settings.meeting_hours, zone, settings.meeting_minutes,
                   settings.meeting_buffer, settings.meeting_notice, settings.meeting_days,
                   settings.meetings_per_day, settings.meeting_hold)


@dataclass(frozen=True, order=True)
class Slot:
    """A meeting's time: aware datetimes (``free_slots`` gives them in UTC, where comparing
    and subtracting are exact; a fall-back hour's wall-clock times are not)."""

    start: datetime
    end: datetime

    def utc(self) -> Slot:
        return Slot(self.start.astimezone(UTC), self.end.astimezone(UTC))


def horizon(rules: MeetingRules, now: datetime) -> tuple[datetime, datetime]:
    """The window offers may fall in: from now + notice to the end of the last day."""
    today = now.astimezone(rules.zone).date()
    last = today + timedelta(days=rules.days)
    return now + timedelta(hours=rules.notice_h), midnight(last, rules.zone)


def midnight(day: date, zone: tzinfo) -> datetime:
    """The start of ``day`` in ``zone`` (01:00 where a DST change skips midnight)."""
    return local(day, 0, zone) or datetime(day.year, day.month, day.day, 1, tzinfo=zone)


def local(day: date, minute: int, zone: tzinfo) -> datetime | None:
    """The wall-clock time ``minute`` after midnight of ``day`` in ``zone``; None when that
    time does not exist on the clock that day (a DST gap). Minute 1440 is the next midnight."""
    if minute >= 24 * 60:
        day, minute = day + timedelta(days=1), minute - 24 * 60
    naive = datetime(day.year, day.month, day.day, minute // 60, minute % 60)
    aware = naive.replace(tzinfo=zone)
    back = aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    return aware if back == naive else None


def in_hours(rules: MeetingRules, slot: Slot) -> bool:
    """The slot lies inside one of its day's ranges, on the wall clock of the owner's zone."""
    slot = slot.utc()
    start = slot.start.astimezone(rules.zone)
    for low, high in rules.hours.ranges(start.weekday()):
        first, last = local(start.date(), low, rules.zone), local(start.date(), high, rules.zone)
        if first is not None and last is not None and first <= slot.start \
                and slot.end <= last:
            return True
    return False


def merged(stretches: Sequence[tuple[datetime, datetime]], pad: timedelta,
           low: float = float("-inf"), high: float = float("inf")) -> tuple[list[float],
                                                                             list[float]]:
    """The stretches overlapping [low, high] (POSIX seconds), widened by ``pad`` each side and
    merged: (starts, ends) as POSIX seconds, sorted. Seconds, not datetimes: comparing aware
    datetimes asks their zone for its offset every time, which costs more than the rest."""
    widen = pad.total_seconds()
    spans = sorted((a - widen, b + widen) for a, b in
                   ((start.timestamp(), end.timestamp()) for start, end in stretches)
                   if a - widen < high and b + widen > low)
    starts: list[float] = []
    ends: list[float] = []
    for start, end in spans:
        if ends and start < ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def within(busy: Sequence[Busy], low: datetime, high: datetime) -> list[Busy]:
    """The stretches overlapping [low, high): by bisection when ``busy`` is sorted by start
    (as ``BusyTime.busy`` promises; checked, and sorted here when not), so a year of busy
    time costs a look at the stretches before the window, not a conversion of each."""
    if not busy:
        return []
    # Compared in the stretches' own zone, datetimes compare as wall-clock values (no offset
    # looked up); the hour's slack each side covers a fall-back hour's ambiguity.
    zone = busy[0].start.tzinfo
    low = low.astimezone(zone) - timedelta(hours=1)
    high = high.astimezone(zone) + timedelta(hours=1)
    if any(a.start > b.start for a, b in pairwise(busy)):
        busy = sorted(busy)
    first = bisect_left(busy, low, key=lambda b: b.start)
    last = bisect_left(busy, high, key=lambda b: b.start)
    return [b for b in busy[:first] if b.end > low] + list(busy[first:last])


def candidates(rules: MeetingRules, first_day: date, last_day: date,
               minutes: int) -> Iterator[Slot]:
    """Every slot on the quarter-hour grid of each day's ranges, in time order."""
    length = timedelta(minutes=minutes)
    day = first_day
    while day <= last_day:
        for low, high in rules.hours.ranges(day.weekday()):
            closes = local(day, high, rules.zone)  # None: the range ends in a DST gap
            for minute in range(low, high - minutes + 1, GRID_MIN):
                start = local(day, minute, rules.zone)
                if start is None:
                    continue
                start = start.astimezone(UTC)
                slot = Slot(start, start + length)
                if (slot.end <= closes) if closes is not None else in_hours(rules, slot):
                    yield slot
        day += timedelta(days=1)


def free_slots(rules: MeetingRules, busy: Sequence[Busy], taken: Sequence[Slot],
               now: datetime, *, count: int = 3, after: datetime | None = None,
               minutes: int | None = None, earliest: datetime | None = None,
               latest: datetime | None = None, skip: datetime | None = None) -> list[Slot]:
    """The next ``count`` free slots starting after ``after`` (pages go forward), none
    overlapping another; ``taken`` are Frontdesk's meetings held or booked for others (busy,
    and counted against the per-day cap); ``earliest``/``latest`` narrow the window; a slot
    starting at ``skip`` is never offered (a reschedule's current time)."""
    length = minutes or rules.minutes
    first, last = (moment.astimezone(UTC) for moment in horizon(rules, now))
    if earliest is not None:
        first = max(first, earliest.astimezone(UTC))
    pad = timedelta(minutes=rules.buffer)
    near = within(busy, first - pad, last + pad)
    starts, ends = merged([(b.start, b.end) for b in near] + [(t.start, t.end) for t in taken],
                          pad, first.timestamp(), last.timestamp())
    per_day = Counter(t.start.astimezone(rules.zone).date() for t in taken)
    found: list[Slot] = []
    first_day = max(first, after or first).astimezone(rules.zone).date()
    for slot in candidates(rules, first_day, last.astimezone(rules.zone).date(), length):
        if slot.start < first or (after is not None and slot.start <= after) \
                or slot.start == skip:
            continue
        if slot.end > last or (latest is not None and slot.end > latest):
            break
        if found and slot.start < found[-1].end:
            continue  # no two offers overlap
        if per_day[slot.start.astimezone(rules.zone).date()] >= rules.per_day:
            continue
        begin, finish = slot.start.timestamp(), slot.end.timestamp()
        index = bisect_left(starts, finish) - 1  # the last merged stretch starting before
        if index >= 0 and ends[index] > begin:
            continue
        found.append(slot)
        if len(found) == count:
            break
    return found


def why_not(rules: MeetingRules, slot: Slot, busy: Sequence[Busy], taken: Sequence[Slot],
            now: datetime) -> str | None:
    """The rule a slot breaks, as a short sentence for the guest and the owner; None if it
    keeps them all. Checked in code at Hold and at Book, whatever the model or guest sent."""
    first, last = (moment.astimezone(UTC) for moment in horizon(rules, now))
    slot = slot.utc()
    length = (slot.end - slot.start).total_seconds() / 60
    if length <= 0 or length > 12 * 60:
        return "that is not a meeting's length"
    if not in_hours(rules, slot):
        return "that time is outside the meeting hours"
    if slot.start < first:
        return f"that is sooner than the {rules.notice_h:g} hours' notice"
    if slot.end > last:
        return f"that is further ahead than {rules.days} days"
    pad = timedelta(minutes=rules.buffer)
    for low, high in [*((b.start, b.end) for b in busy), *((t.start, t.end) for t in taken)]:
        if low.astimezone(UTC) - pad < slot.end and slot.start < high.astimezone(UTC) + pad:
            return "that time is not free any more"
    day = slot.start.astimezone(rules.zone).date()
    if sum(1 for t in taken if t.start.astimezone(rules.zone).date() == day) >= rules.per_day:
        return "that day is full"
    return None


def parse_moment(text: Any, rules: MeetingRules) -> datetime | None:
    """An ISO date or time the model gave (``earliest``/``latest``), in the owner's zone."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=rules.zone)
