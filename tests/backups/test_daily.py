"""FRONTDESK_BACKUP_DAYS as a daily task of the reminder timer: one backup a day at its time,
one owed after days down, the newest N kept, the setting changed or 0 followed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.backups.archive import unpack_backup
from bot.reminders.timer import BACKUP_SOURCE, schedule_backups
from bot.schema import known_migrations
from tests.reminders.conftest import ZONE, DeskFactory, berlin, make_desk

__all__ = ["make_desk"]  # the reminder tests' fixture: the whole gateway on a set clock

NIGHT = berlin(2025, 12, 1, 1, 0)


def daily(home: Path) -> list[str]:
    """The daily backups' names, oldest first."""
    return sorted(p.name for p in (home / "backups").glob("frontdesk-daily-*"))


async def test_one_backup_a_day_at_its_time_keeping_the_newest(make_desk: DeskFactory,
                                                               tmp_path: Path) -> None:
    desk = await make_desk(NIGHT)
    home = desk.services.settings.home
    task = schedule_backups(desk.services.reminders.store, 2, ZONE, "telegram")
    assert task is not None and task.kind == "backup" and task.rrule == "FREQ=DAILY"
    assert task.due_local == "2025-12-01T03:30:00+01:00" and task.source == BACKUP_SOURCE + "2"
    again = schedule_backups(desk.services.reminders.store, 2, ZONE, "telegram")  # a restart
    assert again is not None and again.id == task.id
    assert await desk.services.timer.tick() == [] and daily(home) == []  # not yet

    await desk.send("remember that the boiler was serviced")
    desk.at(berlin(2025, 12, 1, 3, 30))
    assert len(await desk.services.timer.tick()) == 1
    assert daily(home) == ["frontdesk-daily-2025-12-01.tar.gz"]
    manifest = unpack_backup(home / "backups" / daily(home)[0], tmp_path / "out")
    assert manifest.kind == "daily" and "reminders_001_create" in manifest.migrations
    assert set(manifest.migrations) <= known_migrations()
    conn = sqlite3.connect(tmp_path / "out" / "frontdesk.db")
    [payload] = [row[0] for row in conn.execute("SELECT payload FROM inbox")]
    conn.close()
    assert "the boiler was serviced" in payload
    assert await desk.services.timer.tick() == []  # once that day

    for day in (2, 3, 4):
        desk.at(berlin(2025, 12, day, 3, 31))
        assert len(await desk.services.timer.tick()) == 1
    assert daily(home) == ["frontdesk-daily-2025-12-03.tar.gz",
                           "frontdesk-daily-2025-12-04.tar.gz"]
    [pending] = desk.services.reminders.store.pending()
    assert pending.due_local == "2025-12-05T03:30:00+01:00"


async def test_a_backup_missed_while_down_is_taken_once_at_start(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NIGHT)
    schedule_backups(desk.services.reminders.store, 7, ZONE, "telegram")
    later = await make_desk(berlin(2025, 12, 4, 9, 0))  # down for three nights
    schedule_backups(later.services.reminders.store, 7, ZONE, "telegram")
    assert len(await later.services.timer.tick()) == 1
    assert await later.services.timer.tick() == []
    home = later.services.settings.home
    assert daily(home) == ["frontdesk-daily-2025-12-04.tar.gz"]  # named by the day taken
    [pending] = later.services.reminders.store.pending()
    assert pending.due_local == "2025-12-05T03:30:00+01:00"


async def test_a_changed_or_zero_setting_replaces_or_cancels_the_task(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NIGHT)
    reminders = desk.services.reminders.store
    first = schedule_backups(reminders, 7, ZONE, "telegram")
    moved = schedule_backups(reminders, 3, ZONE, "telegram")
    assert first is not None and moved is not None and moved.id != first.id
    assert [r.id for r in reminders.pending()] == [moved.id]
    assert schedule_backups(reminders, 0, ZONE, "telegram") is None
    assert reminders.pending() == []


async def test_the_briefing_and_the_backup_tasks_live_side_by_side(
        make_desk: DeskFactory) -> None:
    from datetime import time

    from bot.reminders.timer import schedule_briefing

    desk = await make_desk(NIGHT)
    schedule_briefing(desk.services.reminders.store, time(7, 30), ZONE, "telegram")
    schedule_backups(desk.services.reminders.store, 7, ZONE, "telegram")
    assert sorted(r.kind for r in desk.services.reminders.store.pending()) == ["backup", "brief"]
    desk.at(berlin(2025, 12, 1, 7, 30))
    assert sorted(r.kind for r in await desk.services.timer.tick()) == ["backup", "brief"]
    assert [r.id for r in desk.services.flows.store.runs()] == ["brief-2025-12-01"]
    assert daily(desk.services.settings.home) == ["frontdesk-daily-2025-12-01.tar.gz"]
