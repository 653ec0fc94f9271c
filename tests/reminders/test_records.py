"""The reminder records: DST-correct recurrences, the limit, cancelling, advancing once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.reminders.store import MAX_PENDING, ReminderError, Reminders
from bot.schema import open_database
from tests.reminders.conftest import ZONE, Clock, berlin


@pytest.fixture
def clock() -> Clock:
    return Clock(berlin(2025, 3, 27, 12, 0))  # Thursday; Berlin moves to +02:00 on Sun 30 Mar


@pytest.fixture
def reminders(tmp_path: Path, clock: Clock) -> Reminders:
    return Reminders(open_database(tmp_path / "f.db"), clock=clock)


def test_a_daily_0830_stays_0830_local_across_the_dst_change(reminders: Reminders,
                                                             clock: Clock) -> None:
    r = reminders.add("owner", "telegram", "1", "stretch", berlin(2025, 3, 27, 8, 30), zone=ZONE,
                      rrule="FREQ=DAILY")
    seen = []
    for _ in range(5):
        seen.append(r.due_local)
        clock.now = r.due_at  # it fires on time
        moved = reminders.advance(r, clock())
        assert moved is not None
        r = moved
    assert seen == ["2025-03-28T08:30:00+01:00", "2025-03-29T08:30:00+01:00",
                    "2025-03-30T08:30:00+02:00", "2025-03-31T08:30:00+02:00",
                    "2025-04-01T08:30:00+02:00"]
    # and back in autumn: the last Sunday of October
    clock.set(berlin(2025, 10, 24, 12, 0))
    weekly = reminders.add("owner", "telegram", "1", "plan", berlin(2025, 10, 20, 9, 0),
                           zone=ZONE, rrule="FREQ=WEEKLY;BYDAY=MO")
    assert weekly.due_local == "2025-10-27T09:00:00+01:00"  # 09:00 local, now at +01:00


def test_days_offline_owe_one_occurrence_then_the_next_after_now(reminders: Reminders,
                                                                 clock: Clock) -> None:
    r = reminders.add("owner", "telegram", "1", "stretch", berlin(2025, 3, 28, 8, 30),
                      zone=ZONE, rrule="FREQ=DAILY")
    clock.set(berlin(2025, 4, 2, 10, 0))  # down for five days
    assert [d.id for d in reminders.due(clock())] == [r.id]
    moved = reminders.advance(r, clock())
    assert moved is not None and moved.due_local == "2025-04-03T08:30:00+02:00"
    assert reminders.due(clock()) == []


def test_an_occurrence_is_advanced_once(reminders: Reminders, clock: Clock) -> None:
    r = reminders.add("owner", "telegram", "1", "x", berlin(2025, 3, 27, 13, 0), zone=ZONE)
    clock.set(berlin(2025, 3, 27, 13, 0))
    assert reminders.advance(r, clock()) is None
    assert reminders.advance(r, clock()) is None  # a second advance of the same occurrence
    done = reminders.get(r.id)
    assert done is not None and (done.status, done.fired) == ("done", 1)


def test_past_times_bad_rules_and_the_limit_are_refused_clearly(reminders: Reminders) -> None:
    with pytest.raises(ReminderError, match="already passed"):
        reminders.add("owner", "telegram", "1", "x", berlin(2025, 3, 27, 11, 0), zone=ZONE)
    with pytest.raises(ReminderError, match="RRULE"):
        reminders.add("owner", "telegram", "1", "x", berlin(2025, 3, 28, 9, 0), zone=ZONE,
                      rrule="every tuesday")
    for n in range(MAX_PENDING):
        reminders.add("telegram:7", "telegram", "7", f"r{n}", berlin(2025, 3, 28, 9, 0),
                      zone=ZONE)
    with pytest.raises(ReminderError, match=f"already have {MAX_PENDING} pending"):
        reminders.add("telegram:7", "telegram", "7", "one more", berlin(2025, 3, 28, 9, 0),
                      zone=ZONE)
    reminders.add("owner", "telegram", "1", "others still can", berlin(2025, 3, 28, 9, 0),
                  zone=ZONE)


def test_only_its_person_or_the_owner_cancels_a_reminder(reminders: Reminders) -> None:
    guest = reminders.add("telegram:7", "telegram", "7", "x", berlin(2025, 3, 28, 9, 0),
                          zone=ZONE)
    assert not reminders.cancel(guest.id, "telegram:8", False)
    assert reminders.cancel(guest.id, "telegram:7", False)
    other = reminders.add("telegram:7", "telegram", "7", "y", berlin(2025, 3, 28, 9, 0),
                          zone=ZONE)
    assert reminders.cancel(other.id, "owner", True)
    assert reminders.pending() == []


def test_the_same_tool_call_sets_one_reminder(reminders: Reminders) -> None:
    first = reminders.add("owner", "telegram", "1", "x", berlin(2025, 3, 28, 9, 0), zone=ZONE,
                          source="tool:run-1:agent:1:call-1")
    again = reminders.add("owner", "telegram", "1", "x", berlin(2025, 3, 28, 9, 0), zone=ZONE,
                          source="tool:run-1:agent:1:call-1")
    assert first.id == again.id and len(reminders.pending()) == 1
