"""The free slots against the rules, by property (Hypothesis): every slot offered keeps every
rule, checked here independently of ``free_slots``'s own arithmetic, and the first one offered
is the earliest grid time that keeps them (nothing free is skipped)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.calendar.writer import Busy
from bot.config.meeting_hours import parse_hours
from bot.meetings.slots import GRID_MIN, MeetingRules, Slot, candidates, free_slots, why_not

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]
HOURS = ["Mon-Fri 09:00-17:00", "Mon-Thu 09:00-12:00,14:00-18:00; Fri 09:00-13:00",
         "Mon-Sun 00:00-24:00", "Sat,Sun 01:00-04:00", "Tue 10:15-11:05"]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[MeetingRules, list[Busy], list[Slot], datetime]:
    zone = ZoneInfo(draw(st.sampled_from(ZONES)))
    rules = MeetingRules(parse_hours("H", draw(st.sampled_from(HOURS))), zone,
                         minutes=draw(st.sampled_from([15, 30, 45, 60, 90])),
                         buffer=draw(st.integers(0, 30)), notice_h=draw(st.sampled_from(
                             [0.0, 1.0, 4.0, 30.5])),
                         days=draw(st.integers(1, 14)), per_day=draw(st.integers(1, 4)))
    # the weeks around both DST changes of 2026 as well as ordinary ones
    base = draw(st.sampled_from([datetime(2026, 3, 26, tzinfo=UTC),
                                 datetime(2026, 10, 22, tzinfo=UTC),
                                 datetime(2026, 4, 2, tzinfo=UTC),
                                 datetime(2026, 6, 10, tzinfo=UTC)]))
    now = base + timedelta(minutes=draw(st.integers(0, 7 * 24 * 60)))
    busy = sorted(Busy(start, start + timedelta(minutes=length)) for start, length in draw(
        st.lists(st.tuples(st.integers(-600, 16 * 24 * 60).map(
            lambda m: now + timedelta(minutes=m)), st.integers(5, 600)), max_size=25)))
    taken = [Slot(s, s + timedelta(minutes=30)) for s in draw(st.lists(
        st.integers(0, 15 * 24 * 4).map(lambda q: now + timedelta(minutes=15 * q)),
        max_size=6))]
    return rules, busy, taken, now


def keeps_the_rules(rules: MeetingRules, slot: Slot, busy: list[Busy], taken: list[Slot],
                    now: datetime) -> None:
    """Each rule, checked directly on the wall clock of the owner's zone."""
    zone = rules.zone
    start, end = slot.start.astimezone(zone), slot.end.astimezone(zone)
    assert slot.end.astimezone(UTC) - slot.start.astimezone(UTC) \
        == timedelta(minutes=rules.minutes)  # real minutes, DST days too
    assert start.replace(tzinfo=None).replace(tzinfo=zone).astimezone(UTC) == slot.start
    first, last = start.hour * 60 + start.minute, end.hour * 60 + end.minute
    if end.date() != start.date():
        last += 24 * 60
    assert any(low <= first and last <= high for low, high in rules.hours.ranges(
        start.weekday())), f"{start} – {end} outside {rules.hours.text}"
    assert slot.start >= now + timedelta(hours=rules.notice_h)
    today = now.astimezone(zone).date()
    assert today <= start.date() < today + timedelta(days=rules.days)
    pad = timedelta(minutes=rules.buffer)
    for other in [*busy, *taken]:
        assert other.end + pad <= slot.start or slot.end + pad <= other.start
    assert sum(t.start.astimezone(zone).date() == start.date() for t in taken) < rules.per_day


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_every_offered_slot_keeps_every_rule(
        scenario: tuple[MeetingRules, list[Busy], list[Slot], datetime]) -> None:
    rules, busy, taken, now = scenario
    slots = free_slots(rules, busy, taken, now, count=5)
    assert slots == sorted(slots)
    for earlier, later in itertools.pairwise(slots):
        assert earlier.end <= later.start  # no two offers overlap
    for slot in slots:
        keeps_the_rules(rules, slot, busy, taken, now)
        assert why_not(rules, slot, busy, taken, now) is None


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_the_first_slot_offered_is_the_earliest_free_one(
        scenario: tuple[MeetingRules, list[Busy], list[Slot], datetime]) -> None:
    rules, busy, taken, now = scenario
    today = now.astimezone(rules.zone).date()
    fitting = [slot for slot in candidates(rules, today, today + timedelta(days=rules.days),
                                           rules.minutes)
               if why_not(rules, slot, busy, taken, now) is None]
    offered = free_slots(rules, busy, taken, now, count=1)
    assert offered == fitting[:1]


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_pages_go_forward_and_never_repeat(
        scenario: tuple[MeetingRules, list[Busy], list[Slot], datetime]) -> None:
    rules, busy, taken, now = scenario
    first = free_slots(rules, busy, taken, now)
    if first:
        second = free_slots(rules, busy, taken, now, after=first[-1].start)
        assert all(slot.start > first[-1].start for slot in second)


def test_a_start_that_does_not_exist_on_a_dst_morning_is_never_offered() -> None:
    zone = ZoneInfo("Europe/Berlin")  # 2026-03-29: 02:00 jumps to 03:00
    rules = MeetingRules(parse_hours("H", "Sun 01:00-05:00"), zone, minutes=30, buffer=0,
                         notice_h=0, days=3)
    now = datetime(2026, 3, 28, 12, tzinfo=UTC)
    slots = free_slots(rules, [], [], now, count=20)
    starts = [f"{s.start.astimezone(zone):%H:%M}" for s in slots]
    assert starts[:4] == ["01:00", "01:30", "03:00", "03:30"]  # 01:30 ends at 03:00 CEST
    assert not [s for s in starts if s.startswith("02:")]
    assert all(s.end.astimezone(UTC) - s.start.astimezone(UTC) == timedelta(minutes=30)
               for s in slots)
    assert GRID_MIN == 15


def test_a_rule_broken_is_named() -> None:
    zone = ZoneInfo("UTC")
    rules = MeetingRules(parse_hours("H", "Mon-Fri 09:00-17:00"), zone, notice_h=4, days=14)
    now = datetime(2026, 6, 10, 8, tzinfo=UTC)  # a Wednesday
    at = datetime(2026, 6, 10, 18, tzinfo=UTC)
    assert why_not(rules, Slot(at, at + timedelta(minutes=30)), [], [], now) \
        == "that time is outside the meeting hours"
    soon = datetime(2026, 6, 10, 10, tzinfo=UTC)
    assert "notice" in str(why_not(rules, Slot(soon, soon + timedelta(minutes=30)), [], [], now))
    far = datetime(2026, 7, 1, 10, tzinfo=UTC)
    assert "ahead" in str(why_not(rules, Slot(far, far + timedelta(minutes=30)), [], [], now))


def test_busy_time_out_of_order_is_read_the_same() -> None:
    zone = ZoneInfo("Europe/Berlin")
    rules = MeetingRules(parse_hours("H", "Mon-Fri 09:00-17:00"), zone, notice_h=0, days=3)
    now = datetime(2026, 6, 10, 6, tzinfo=UTC)
    day = datetime(2026, 6, 10, 9, tzinfo=zone)
    busy = [Busy(day + timedelta(hours=h), day + timedelta(hours=h, minutes=50))
            for h in (5, 0, 2, 1, 3)]
    assert free_slots(rules, busy, [], now, count=6) \
        == free_slots(rules, sorted(busy), [], now, count=6)
    assert free_slots(rules, busy, [], now)[0].start.astimezone(zone).hour == 13
