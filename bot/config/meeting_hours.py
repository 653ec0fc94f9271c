"""FRONTDESK_MEETING_HOURS read into weekly hours: which wall-clock ranges of which weekdays
the owner takes meetings in.

The text is one or more groups split by ``;``, each a day or a span of days (``Mon``,
``Mon-Fri``, ``Sat,Sun``), a space, and one or more ``HH:MM-HH:MM`` ranges split by ``,``:
``Mon-Thu 09:00-12:00,14:00-18:00; Fri 09:00-13:00``. A bad text raises a ValueError naming
the variable and showing the expected shape, like every other setting (``bot.config.values``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULT_HOURS = "Mon-Fri 09:00-17:00"
EXAMPLE = "Mon-Fri 09:00-17:00, or Mon-Thu 09:00-12:00,14:00-18:00; Fri 09:00-13:00"
_RANGE = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])-([01]?[0-9]|2[0-3]|24):([0-5][0-9])")


@dataclass(frozen=True)
class WeeklyHours:
    """Per weekday (Monday first), its ranges as (start, end) minutes after midnight, sorted
    and not overlapping; ``text`` is what was configured."""

    days: tuple[tuple[tuple[int, int], ...], ...]
    text: str = DEFAULT_HOURS

    def ranges(self, weekday: int) -> tuple[tuple[int, int], ...]:
        """The ranges of a weekday (0 = Monday) in minutes after midnight."""
        return self.days[weekday]

    def times(self, weekday: int) -> list[tuple[time, time]]:
        """The same ranges as times of day (an end at 24:00 is 23:59)."""
        return [(minute_time(start), minute_time(min(end, 24 * 60 - 1)))
                for start, end in self.days[weekday]]


def minute_time(minutes: int) -> time:
    """Minutes after midnight as a time of day."""
    return time(minutes // 60, minutes % 60)


def parse_hours(name: str, raw: str | None) -> WeeklyHours:
    """Weekly hours from the setting's text (the default when unset)."""
    text = (raw or DEFAULT_HOURS).strip()
    days: list[list[tuple[int, int]]] = [[] for _ in DAYS]
    try:
        for group in filter(None, (g.strip() for g in text.split(";"))):
            day_part, range_part = group.partition(" ")[::2]
            for weekday in weekdays(day_part):
                days[weekday] += [clock_range(r.strip()) for r in range_part.split(",")]
    except ValueError as problem:
        raise ValueError(f"{name}={raw!r} is not a set of weekly hours ({problem}): expected "
                         f"e.g. {EXAMPLE}") from None
    if not any(days):
        raise ValueError(f"{name}={raw!r} names no hours at all: expected e.g. {EXAMPLE}")
    return WeeklyHours(tuple(tuple(merged(d)) for d in days), text)


def weekdays(text: str) -> list[int]:
    """``Mon``, ``Mon-Fri``, ``Sat,Sun`` (or a mix) as weekday numbers, Monday 0."""
    found: list[int] = []
    for part in filter(None, text.lower().split(",")):
        first, last = part.partition("-")[::2]
        start, end = day_number(first), day_number(last or first)
        if end < start:
            raise ValueError(f"{part!r} runs backwards")
        found += range(start, end + 1)
    if not found:
        raise ValueError("no days named")
    return found


def day_number(word: str) -> int:
    """``mon`` (or ``monday``) -> 0, ... ``sun`` -> 6."""
    key = word.strip()[:3]
    if key not in DAYS or not DAYS[DAYS.index(key)].startswith(key) or len(word.strip()) < 3:
        raise ValueError(f"{word.strip()!r} is not a day (Mon, Tue, ... Sun)")
    return DAYS.index(key)


def clock_range(text: str) -> tuple[int, int]:
    """``09:00-17:00`` as (540, 1020) minutes after midnight; the end after the start."""
    found = _RANGE.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not a range HH:MM-HH:MM")
    start = int(found.group(1)) * 60 + int(found.group(2))
    end = int(found.group(3)) * 60 + int(found.group(4))
    if end > 24 * 60 or end <= start:
        raise ValueError(f"{text!r} does not end after it starts")
    return start, end


def merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ranges of one day as one."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
