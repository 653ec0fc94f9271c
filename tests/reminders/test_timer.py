"""The timer on the real clock: asleep with nothing due, woken by a new reminder, on time."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path

from bot.app import App, assemble
from bot.models import Models
from bot.models.offline import OfflineModel
from tests.support.harness import OWNER, RecordingAdapter, make_settings


async def test_a_reminder_set_while_idle_fires_within_two_seconds(tmp_path: Path) -> None:
    services = assemble(
        make_settings(tmp_path / "home", FRONTDESK_TIMEZONE="Europe/Berlin"),
        models=Models(small=OfflineModel(role="small"), big=OfflineModel(role="big")))
    gateway = services.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    scheduler = services.timer
    assert scheduler.delay() is None  # nothing due: no time-out, only a poke wakes it
    timer = asyncio.create_task(scheduler.run())
    try:
        await asyncio.wait_for(scheduler.asleep.wait(), 10)  # the timer waits
        zone = services.owner.zone()
        due = time.time() + 1.0
        services.reminders.store.add("owner", "telegram", OWNER, "stretch",
                               datetime.fromtimestamp(due, zone), zone=zone)
        await asyncio.wait_for(adapter.changed.wait(), 10)
        late_by = time.time() - due
        assert adapter.to(OWNER) == ["⏰ Reminder: stretch"]
        assert 0 <= late_by < 2.0, late_by
        assert scheduler.delay() is None  # done: asleep again
    finally:
        timer.cancel()


async def test_a_reminder_set_by_another_process_wakes_the_running_timer(tmp_path: Path) -> None:
    def services_on(home: Path) -> App:
        return assemble(
            make_settings(home, FRONTDESK_TIMEZONE="Europe/Berlin"),
            models=Models(small=OfflineModel(role="small"), big=OfflineModel(role="big")))

    running = services_on(tmp_path / "home")  # `frontdesk run`
    gateway = running.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    assert await running.reminders.wakeup.listen(running.timer.poke)
    timer = asyncio.create_task(running.timer.run())
    try:
        await asyncio.wait_for(running.timer.asleep.wait(), 10)  # the timer waits
        assert running.timer.delay() is None  # with no time-out: nothing is pending
        other = services_on(tmp_path / "home")  # `frontdesk chat`: its own connection
        zone = other.owner.zone()
        due = time.time() + 1.0
        other.reminders.store.add("owner", "telegram", OWNER, "stretch",
                            datetime.fromtimestamp(due, zone), zone=zone)
        await asyncio.wait_for(adapter.changed.wait(), 10)
        assert adapter.to(OWNER) == ["⏰ Reminder: stretch"]
        assert time.time() - due < 2.0
    finally:
        timer.cancel()
        await running.reminders.wakeup.close()
    assert not other.reminders.wakeup.poke()  # nobody listens any more: refused, quietly
