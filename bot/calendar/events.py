"""A calendar's events in a window, in one zone: the expansion every source shares, and busy time.

An ``EventSource`` is anything that lists occurrences in a window (the .ics calendar, the
CalDAV copy, both merged); ``expand`` turns a parsed iCalendar into those occurrences:
recurrence expansion (RRULE, RDATE, EXDATE, moved and cancelled occurrences) is
recurring-ical-events', every series is expanded on its own so one broken series is skipped
*and reported* instead of silently dropped or fatal, and every time comes out in the window's
zone (floating times are read in that zone, all-day events stay dates). ``busy_stretches``
reads busy time off the occurrences as RFC 5545 says: ``TRANSP`` honoured where present and
``OPAQUE`` where absent, cancelled events and occurrences free, an all-day event blocks its
days from midnight to midnight in the zone (so a DST day is 23 or 25 hours long).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from bot.calendar.rules import RuleError, RuleTooDense, check_days_exist, min_gap_s, rule_parts
from bot.calendar.writer import Busy

if TYPE_CHECKING:  # the iCalendar libraries load with the first calendar read, not at start
    import icalendar

BUSY = "busy"
MAX_SERIES_OCCURRENCES = 200_000  # a series with more, from its start to the window's end, is
# skipped: expanding walks each one


@dataclass(frozen=True)
class Event:
    """One occurrence: datetimes are aware and in the window's zone, all-day ones are dates."""

    summary: str
    start: datetime | date
    end: datetime | date
    all_day: bool
    status: str | None
    transparent: bool = False  # TRANSP:TRANSPARENT: shown, but not busy time

    def to_json(self) -> dict[str, Any]:
        """The `frontdesk agenda --json` shape."""
        return {"summary": self.summary, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "all_day": self.all_day, "status": self.status}


@dataclass
class AgendaResult:
    """The events of a window, sorted by start then summary, and the series skipped."""

    events: list[Event] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def busy_only(self) -> AgendaResult:
        """Free/busy view for people other than the owner: times only, no titles."""
        busy = [replace(event, summary=BUSY) for event in self.events
                if (event.status or "").upper() != "CANCELLED"]
        return AgendaResult(events=busy, skipped=[])


class EventSource(ABC):
    """A calendar read in one zone: ``events(start, end)``, and what follows from it."""

    zone: tzinfo

    @abstractmethod
    def events(self, start: datetime, end: datetime) -> AgendaResult:
        """Every occurrence overlapping [start, end), zero-length ones included."""

    def unavailable(self) -> str:
        """'' when the source is current; else one line saying it could not be refreshed."""
        return ""

    def busy(self, start: datetime, end: datetime) -> list[Busy]:
        """The busy stretches overlapping [start, end) (``BusyTime``), merged and sorted."""
        return busy_stretches(self.events(start, end).events, self.zone)

    def next_hours(self, hours: float, now: datetime | None = None) -> AgendaResult:
        """What is on from now for the next ``hours`` (for triage's urgency)."""
        start = self.aware(now) if now is not None else datetime.now(self.zone)
        return self.events(start, start + timedelta(hours=hours))

    def today(self, now: datetime | None = None) -> tuple[datetime, datetime]:
        """Midnight to midnight of today in the calendar's zone."""
        current = self.aware(now) if now is not None else datetime.now(self.zone)
        midnight = datetime.combine(current.date(), datetime.min.time(), self.zone)
        return midnight, datetime.combine(current.date() + timedelta(days=1),
                                          datetime.min.time(), self.zone)

    def aware(self, moment: datetime) -> datetime:
        """A window bound in the calendar's zone (naive bounds are read in it)."""
        if moment.tzinfo is None:
            return moment.replace(tzinfo=self.zone)
        return moment.astimezone(self.zone)


def expand(calendar: icalendar.Calendar, start: datetime, end: datetime,
           zone: tzinfo) -> AgendaResult:
    """Every occurrence of ``calendar`` overlapping [start, end) (aware bounds), in ``zone``."""
    from recurring_ical_events.adapters.event import EventAdapter
    from recurring_ical_events.series import Series

    result = AgendaResult()
    for components in series_components(calendar):
        try:
            for component in components:
                check_series_rule(component, end)
            series = Series([EventAdapter(c) for c in components])
            events = [_event(o.as_component(False), o.start, o.end, zone)
                      for o in series.between(start, end)]
        except Exception as exc:  # any error in one series must not hide the others
            result.skipped.append(_skip_message(components[0], exc))
            continue
        result.events.extend(events)
    result.events.sort(key=lambda event: sort_key(event, zone))
    return result


def merged(results: list[AgendaResult], zone: tzinfo) -> AgendaResult:
    """Several sources' results as one, sorted the same way."""
    events = [event for result in results for event in result.events]
    events.sort(key=lambda event: sort_key(event, zone))
    return AgendaResult(events=events, skipped=[line for r in results for line in r.skipped])


def busy_stretches(events: list[Event], zone: tzinfo) -> list[Busy]:
    """The opaque, not cancelled occurrences as busy time: overlapping or touching stretches
    joined, sorted; all-day ones from midnight to midnight in ``zone``. In UTC, so arithmetic
    on them is exact across a DST change (Python adds wall-clock time within one zone). Not
    clipped to the window, so a buffer around an event just outside it can still be kept."""
    spans = sorted(Busy(_instant(event.start, zone).astimezone(UTC),
                        _instant(event.end, zone).astimezone(UTC))
                   for event in events
                   if not event.transparent and (event.status or "").upper() != "CANCELLED")
    joined: list[Busy] = []
    for span in spans:
        if span.end <= span.start:
            continue  # a zero-length event blocks no time
        if joined and span.start <= joined[-1].end:
            last = joined.pop()
            span = Busy(last.start, max(last.end, span.end))
        joined.append(span)
    return joined


def _instant(moment: datetime | date, zone: tzinfo) -> datetime:
    """An aware datetime; a date is its midnight in ``zone``."""
    if isinstance(moment, datetime):
        return moment
    return datetime.combine(moment, datetime.min.time(), zone)


def sort_key(event: Event, zone: tzinfo) -> tuple[datetime, str]:
    """Start (an all-day event starts at midnight in the zone), then summary."""
    return _instant(event.start, zone), event.summary


def _event(component: icalendar.Event, start: date, end: date, zone: tzinfo) -> Event:
    """Turn one expanded occurrence into an Event in ``zone``."""
    all_day = not isinstance(start, datetime)
    status = component.get("STATUS")
    transparent = str(component.get("TRANSP", "OPAQUE")).strip().upper() == "TRANSPARENT"
    return Event(summary=str(component.get("SUMMARY", "")),
                 start=_moment(start, all_day, zone), end=_moment(end, all_day, zone),
                 all_day=all_day, status=str(status) if status is not None else None,
                 transparent=transparent)


def _moment(value: date, all_day: bool, zone: tzinfo) -> datetime | date:
    """A date for all-day events; else an aware datetime (floating read in the zone)."""
    if all_day:
        return value.date() if isinstance(value, datetime) else value
    if not isinstance(value, datetime):
        return datetime.combine(value, datetime.min.time(), zone)
    if value.tzinfo is None:
        return value.replace(tzinfo=zone)
    return value.astimezone(zone)


def check_series_rule(component: icalendar.Event, end: datetime) -> None:
    """RuleError for a series rule that cannot be expanded within bounds: one whose days never
    exist, or with more than ``MAX_SERIES_OCCURRENCES`` occurrences from its start to ``end``
    (recurring-ical-events walks every one of them). Its parts only: nothing is expanded."""
    rule = component.get("RRULE")
    if rule is None:
        return
    text = rule.to_ical().decode() if hasattr(rule, "to_ical") else str(rule)
    try:
        check_days_exist(text)
        gap = min_gap_s(text)
    except RuleError:
        raise
    except (ValueError, TypeError):  # unreadable: the expansion names what is broken
        return
    start = component.get("DTSTART")
    first = getattr(start, "dt", None)
    if not isinstance(first, date):
        return
    if not isinstance(first, datetime):
        first = datetime.combine(first, datetime.min.time())
    span = (end.replace(tzinfo=None) - first.replace(tzinfo=None)).total_seconds()
    count = rule_parts(text).get("COUNT", "")
    occurrences = span / max(gap, 1.0)
    if count.isdigit():
        occurrences = min(occurrences, float(count))
    if occurrences > MAX_SERIES_OCCURRENCES:
        raise RuleTooDense(f"it repeats too often to read ({text})")


def series_components(calendar: icalendar.Calendar) -> list[list[icalendar.Event]]:
    """VEVENTs grouped into series by UID (a missing UID is its own series), file order."""
    import icalendar

    groups: dict[str, list[icalendar.Event]] = defaultdict(list)
    for index, component in enumerate(calendar.walk("VEVENT")):
        assert isinstance(component, icalendar.Event)
        uid = component.get("UID")
        groups[str(uid) if uid is not None else f"\0no-uid-{index}"].append(component)
    return list(groups.values())


def _skip_message(component: icalendar.Event, exc: Exception) -> str:
    """One line naming the skipped series and why."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    return f"skipped broken series {_series_name(component)}: {detail}"


def _series_name(component: icalendar.Event) -> str:
    """The summary, else the UID, else the raw start: something the owner can find."""
    summary = str(component.get("SUMMARY", ""))
    if summary:
        return repr(summary)
    if component.get("UID") is not None:
        return f"(untitled, UID {component['UID']})"
    try:
        value = component["DTSTART"].to_ical()
        raw = value.decode() if isinstance(value, bytes) else str(value)
    except Exception:  # the start itself may be the broken part
        raw = "?"
    return f"(untitled, starting {raw})"
