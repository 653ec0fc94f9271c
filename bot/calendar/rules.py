"""Recurrence rules someone else wrote, read within bounds: how often, whether ever, what next.

``dateutil.rrule`` expands a rule; what it cannot do is stop early. A rule whose days never
exist (``FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30``) makes ``after`` walk day by day to the year
9999 (seconds of work), and a dense rule anchored long ago yields every occurrence since its
start. So three bounds are added here, on top of the library:

- ``min_gap_s`` reads the rule's own parts (no expansion) and gives the shortest time two
  occurrences can be apart: ``FREQ``×``INTERVAL``, or less when a ``BYSECOND``/``BYMINUTE``/
  ``BYHOUR`` list puts several in one period. A rule under a caller's minimum is refused.
- ``next_occurrence`` looks at most ``MAX_LOOKED`` occurrences and ``HORIZON_YEARS`` ahead. It
  first moves the rule's start forward by whole periods (the occurrences are the same), and
  evaluates the rule a multiple of 400 years later: the Gregorian calendar repeats exactly
  every 400 years (146,097 days, a whole number of weeks), so the answer is the same, and
  dateutil's own end of the calendar is then at most ``HORIZON_YEARS`` + 400 years away. A
  rule with no occurrence stops there: a short walk by construction, never a frozen bot.
- ``RuleTooDense``: a rule with more than ``MAX_LOOKED`` occurrences between its (moved) start
  and the moment asked about cannot be followed.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from itertools import pairwise

from dateutil.parser import parse as parse_time
from dateutil.relativedelta import relativedelta
from dateutil.rrule import rrule, rrulestr

HORIZON_YEARS = 10  # an occurrence further away than this counts as none
MAX_LOOKED = 20_000  # occurrences looked at in one search, at most
CYCLE_YEARS = 400  # the Gregorian calendar's period: dates and weekdays repeat exactly
SECONDS = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600, "DAILY": 86400, "WEEKLY": 7 * 86400}
MONTHS = {"MONTHLY": 1, "YEARLY": 12}
# A BY-list of a unit finer than the period puts several occurrences in it: (part, unit, cycle)
DAY_PARTS = ("BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYDAY", "WKST")
EXPANDING = (("BYSECOND", 1, 60), ("BYMINUTE", 60, 60), ("BYHOUR", 3600, 24))


class RuleError(ValueError):
    """A rule that cannot be used; the message is one sentence for the person."""


class RuleTooDense(RuleError):
    """More occurrences to look at than a search may take."""


def rule_parts(rule: str) -> dict[str, str]:
    """``FREQ=DAILY;INTERVAL=2`` -> {'FREQ': 'DAILY', 'INTERVAL': '2'} (names upper-cased)."""
    parts: dict[str, str] = {}
    for item in rule.split(";"):
        pair = item.partition("=")  # (name, "=", value)
        name = pair[0]
        value = pair[2]
        if name.strip():
            parts[name.strip().upper()] = value.strip()
    return parts


def read_rule(text: str) -> str:
    """One RRULE (without an ``RRULE:`` prefix) that dateutil reads; RuleError otherwise."""
    cleaned = text.strip().removeprefix("RRULE:").strip()
    usage = (f"I can't read the recurrence {text!r}: give an iCalendar RRULE such as "
             "FREQ=WEEKLY;BYDAY=MO.")
    if not cleaned or any(ch in cleaned for ch in "\r\n:"):  # one rule, no DTSTART of its own
        raise RuleError(usage)
    try:
        parsed = rrulestr(cleaned, dtstart=datetime(2000, 1, 1))
    except (ValueError, TypeError, OverflowError) as exc:
        raise RuleError(usage) from exc
    if not isinstance(parsed, rrule) or "BYEASTER" in rule_parts(cleaned):
        raise RuleError(usage)  # Easter does not repeat every 400 years: no bound holds
    return cleaned


def min_gap_s(rule: str) -> float:
    """The shortest time two occurrences of ``rule`` can be apart, from its parts alone."""
    parts = rule_parts(rule)
    freq = parts.get("FREQ", "").upper()
    interval = max(1, int(parts.get("INTERVAL") or 1))
    gap = float(SECONDS.get(freq) or MONTHS.get(freq, 1) * 28 * 86400) * interval
    for name, unit, cycle in EXPANDING:
        values = sorted({int(v) for v in parts.get(name, "").split(",") if v.strip()})
        if len(values) > 1:
            steps = [b - a for a, b in pairwise(values)]
            steps.append(cycle - values[-1] + values[0])  # the last, then the next period's
            gap = min(gap, float(min(steps) * unit))
            break  # the finest list decides: coarser ones only repeat its pattern
    return gap


def gap_label(seconds: float) -> str:
    """900 -> 'every 15 minutes', 3600 -> 'every hour'."""
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return "every hour" if hours == 1 else f"every {hours} hours"
    minutes = max(1, math.ceil(seconds / 60))
    return "every minute" if minutes == 1 else f"every {minutes} minutes"


def check_gap(rule: str, minimum_s: float) -> None:
    """RuleError saying the minimum when ``rule`` can recur more often than ``minimum_s``."""
    if min_gap_s(rule) < minimum_s:
        raise RuleError(f"That repeats too often: I remind no more often than "
                        f"{gap_label(minimum_s)} here. Give a rule with longer gaps.")


def check_days_exist(rule: str) -> None:
    """RuleError when the rule's days never exist (30 February, week 53 on a Monday of May):
    its day parts alone, expanded a month or a year at a time over one 400-year cycle
    (milliseconds), before the rule itself is ever walked."""
    kept = {name: value for name, value in rule_parts(rule).items()
            if name in DAY_PARTS}
    # "1MO" is the month's first Monday in a monthly rule, the year's in a yearly one
    freq = "MONTHLY" if rule_parts(rule).get("FREQ", "").upper() == "MONTHLY" else "YEARLY"
    days = ";".join([f"FREQ={freq}", *(f"{name}={value}" for name, value in kept.items())])
    cycle_start = datetime(datetime.max.year - CYCLE_YEARS + 1, 1, 1)
    if not kept or rrulestr(days, dtstart=cycle_start).after(cycle_start, inc=True) is not None:
        return
    raise RuleError("That recurrence can never happen: no date matches it. Check the day "
                    "and month parts of the rule.")


def next_occurrence(rule: str, start: datetime, after: datetime, *,
                    inclusive: bool = False) -> datetime | None:
    """The first occurrence after ``after`` (at it, when inclusive) of ``rule`` anchored at
    ``start`` (both naive wall times), within ``HORIZON_YEARS``; None when there is none.

    RuleTooDense when more than ``MAX_LOOKED`` occurrences come before it.
    """
    parsed = rrulestr(rule, dtstart=start)
    assert isinstance(parsed, rrule)
    if "COUNT" not in rule_parts(rule):  # with a count, every occurrence counts from the start
        start = _moved_forward(rule, start, after)
    horizon_end = after + relativedelta(years=HORIZON_YEARS)
    shift = _cycles_to_shift(after)
    until = _until(rule)
    shifted_until = None
    if until is not None:
        if until < after:
            return None
        if until < horizon_end:
            shifted_until = until + relativedelta(years=shift)
    shifted = parsed.replace(dtstart=start + relativedelta(years=shift), until=shifted_until)
    shifted_after, shifted_end = (after + relativedelta(years=shift),
                                  horizon_end + relativedelta(years=shift))
    for looked, occurrence in enumerate(shifted, start=1):
        if looked > MAX_LOOKED:
            raise RuleTooDense("That rule has too many occurrences for me to follow; give "
                               "one with longer gaps.")
        if occurrence > shifted_end:
            return None
        if occurrence > shifted_after or (inclusive and occurrence == shifted_after):
            return occurrence - relativedelta(years=shift)
    return None


def _until(rule: str) -> datetime | None:
    """The rule's UNTIL as a naive wall time, if it has one (``read_rule`` refused a UTC one:
    the rules run over naive local times)."""
    value = rule_parts(rule).get("UNTIL")
    return parse_time(value, ignoretz=True) if value else None


def _cycles_to_shift(after: datetime) -> int:
    """Years (a multiple of 400) that put ``after`` at most HORIZON_YEARS + 400 years before
    the calendar's end, and at least HORIZON_YEARS + 1 years before it."""
    room = datetime.max.year - 1 - HORIZON_YEARS - after.year
    return max(0, room // CYCLE_YEARS) * CYCLE_YEARS


def _moved_forward(rule: str, start: datetime, after: datetime) -> datetime:
    """``start`` moved forward by whole periods (FREQ×INTERVAL) to at most one period before
    ``after``: the rule has the same occurrences from there on, found in a short walk."""
    parts = rule_parts(rule)
    freq = parts.get("FREQ", "").upper()
    interval = max(1, int(parts.get("INTERVAL") or 1))
    if after <= start:
        return start
    if freq in SECONDS:
        period = timedelta(seconds=SECONDS[freq] * interval)
        periods = (after - start) // period - 1
        return start + period * periods if periods > 0 else start
    step = MONTHS.get(freq, 0) * interval
    if not step:
        return start
    months = (after.year - start.year) * 12 + after.month - start.month
    periods = months // step - 1
    for back in range(12):  # a day the target month lacks (31st, 29 Feb) moves back a period
        if periods - back <= 0:
            break
        moved = start + relativedelta(months=step * (periods - back))
        if moved.day == start.day:
            return moved
    return start
