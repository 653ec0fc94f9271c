"""FRONTDESK_BRIEF_AT as a recurring task of the timer: once a day, missed ones once, settings
changed or unset follow."""

from __future__ import annotations

from datetime import time

from bot.reminders.timer import schedule_briefing
from tests.reminders.conftest import ZONE, DeskFactory, berlin
from tests.support.harness import GUEST, OWNER_CHAT

EARLY = berlin(2025, 12, 1, 6, 0)


def briefings(sent: list[str]) -> int:
    return sum("Send this briefing?" in text for text in sent)


async def test_the_briefing_is_a_daily_task_sent_once_a_day_at_its_time(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(EARLY, FRONTDESK_BRIEF_AT="07:30")
    task = schedule_briefing(desk.services.reminders.store, time(7, 30), ZONE, "telegram")
    assert task is not None and task.kind == "brief" and task.rrule == "FREQ=DAILY"
    assert task.due_local == "2025-12-01T07:30:00+01:00"
    reminders = desk.services.reminders.store
    again = schedule_briefing(reminders, time(7, 30), ZONE, "telegram")  # a restart
    assert again is not None and again.id == task.id
    assert await desk.services.timer.tick() == []  # not yet
    desk.at(berlin(2025, 12, 1, 7, 30))
    assert len(await desk.services.timer.tick()) == 1
    assert briefings(desk.adapter.to(OWNER_CHAT)) == 1
    assert [r.id for r in desk.services.flows.store.runs()] == ["brief-2025-12-01"]
    assert await desk.services.timer.tick() == []  # once that day
    [pending] = desk.services.reminders.store.pending()
    assert pending.due_local == "2025-12-02T07:30:00+01:00"


async def test_a_briefing_missed_while_down_is_sent_once_at_start(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(EARLY)
    schedule_briefing(desk.services.reminders.store, time(7, 30), ZONE, "telegram")
    later = await make_desk(berlin(2025, 12, 3, 9, 0))  # down for two days
    schedule_briefing(later.services.reminders.store, time(7, 30), ZONE, "telegram")
    assert len(await later.services.timer.tick()) == 1
    assert await later.services.timer.tick() == []
    assert briefings(later.adapter.to(OWNER_CHAT)) == 1  # one owed, not one per missed day
    assert [r.id for r in later.services.flows.store.runs()] == ["brief-2025-12-01"]
    [pending] = later.services.reminders.store.pending()
    assert pending.due_local == "2025-12-04T07:30:00+01:00"


async def test_a_changed_or_unset_setting_replaces_or_cancels_its_task(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(EARLY)
    reminders = desk.services.reminders.store
    schedule_briefing(reminders, time(7, 30), ZONE, "telegram")
    moved = schedule_briefing(reminders, time(8, 15), ZONE, "telegram")
    assert moved is not None and [r.id for r in reminders.pending()] == [moved.id]
    assert moved.due_local == "2025-12-01T08:15:00+01:00"
    assert schedule_briefing(reminders, None, ZONE, "telegram") is None
    assert reminders.pending() == []
    back = schedule_briefing(reminders, time(8, 15), ZONE, "telegram")  # cancelled stays so
    assert back is not None and back.status == "cancelled" and reminders.pending() == []


async def test_the_owner_sees_the_briefing_task_in_reminders(make_desk: DeskFactory) -> None:
    desk = await make_desk(EARLY)
    task = schedule_briefing(desk.services.reminders.store, time(7, 30), ZONE, "telegram")
    assert task is not None
    listed = (await desk.send("/reminders")).text
    assert f"{task.id} Mon 1 Dec 07:30 the morning briefing (repeats)" in listed
    guest = (await desk.send("/reminders", user=GUEST)).text
    assert "morning briefing" not in guest
