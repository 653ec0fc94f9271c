"""Hostile recurrence rules: none freezes the bot, none floods a chat, expansion stays bounded.

Through the whole gateway on the offline models and a real SQLite file, on an injected clock:
the ``set_reminder`` tool is called as the model would, and the scheduler ticks the time on.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

import pytest

from bot.calendar import rules
from bot.calendar.rules import MAX_LOOKED, RuleTooDense, next_occurrence
from bot.tools.registry import Caller
from tests.reminders.conftest import GUEST, OWNER, Desk, DeskFactory, berlin

NOON = berlin(2025, 12, 1, 12, 0)  # Monday
IMPOSSIBLE = "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30"
GUEST_CALLER = Caller(scope=f"telegram:{GUEST}", is_owner=False, platform="telegram",
                      chat_id=GUEST, name="guest")
OWNER_CALLER = Caller(scope="owner", is_owner=True, platform="telegram", chat_id=OWNER,
                      name="owner")


async def set_reminder(desk: Desk, caller: Caller, rrule: str, *, when: str = "13:00",
                       prompt: bool = False) -> str:
    arguments: dict[str, object] = {"when": f"2025-12-01T{when}", "text": "ping",
                                    "rrule": rrule}
    if prompt:
        arguments["run_prompt"] = True
    return await desk.services.tools.registry.call("set_reminder", arguments, caller)


async def test_a_rule_that_never_fires_is_refused_at_once_and_others_are_answered(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    started = time.monotonic()
    refusal, bystander = await asyncio.gather(
        set_reminder(desk, OWNER_CALLER, "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30"),
        desk.send("hello", user=GUEST))
    assert time.monotonic() - started < 2.0  # dateutil alone walks to the year 9999: seconds
    assert refusal.startswith("That recurrence can never happen")
    assert bystander.text  # the other chat was answered meanwhile
    assert await set_reminder(desk, GUEST_CALLER, IMPOSSIBLE) == (
        "That repeats too often: I remind no more often than every 15 minutes here. Give a "
        "rule with longer gaps.")
    assert desk.services.reminders.store.pending() == []


async def test_fifty_secondly_reminders_from_a_guest_set_none_and_send_nothing(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    answers = [await set_reminder(desk, GUEST_CALLER, "FREQ=SECONDLY") for _ in range(50)]
    assert set(answers) == {"That repeats too often: I remind no more often than every 15 "
                            "minutes here. Give a rule with longer gaps."}
    assert "every 15 minutes" in await set_reminder(desk, GUEST_CALLER, "FREQ=MINUTELY")
    assert "every 15 minutes" in await set_reminder(desk, GUEST_CALLER,
                                                    "FREQ=HOURLY;BYMINUTE=0,5")
    desk.at(NOON + timedelta(hours=2))
    assert await desk.services.timer.tick() == []
    assert desk.services.reminders.store.pending() == [] and desk.adapter.sent == []
    assert "I'll remind you" in await set_reminder(desk, GUEST_CALLER,
                                                   "FREQ=MINUTELY;INTERVAL=15")


async def test_the_owner_may_remind_every_minute_and_run_a_prompt_task_hourly(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    assert "I'll remind you on Mon 1 Dec at 13:00" in await set_reminder(
        desk, OWNER_CALLER, "FREQ=MINUTELY;INTERVAL=1")
    assert "every minute" in await set_reminder(desk, OWNER_CALLER, "FREQ=SECONDLY")
    assert "every hour" in await set_reminder(desk, OWNER_CALLER, "FREQ=MINUTELY;INTERVAL=30",
                                              prompt=True)
    assert "I'll do this" in await set_reminder(desk, OWNER_CALLER, "FREQ=HOURLY",
                                                prompt=True)
    [minutely, hourly] = desk.services.reminders.store.pending()
    desk.at(berlin(2025, 12, 1, 13, 0))
    assert [r.id for r in await desk.services.timer.tick()] == [minutely.id, hourly.id]
    following = desk.services.reminders.store.get(minutely.id)
    assert following is not None and following.due == berlin(2025, 12, 1, 13, 1)


def test_a_search_looks_at_a_bounded_number_of_occurrences(
        monkeypatch: pytest.MonkeyPatch) -> None:
    start, after = datetime(2020, 1, 1), datetime(2025, 12, 1, 12, 0, 30)
    # Anchored six years ago, a minutely rule is found a period from its moved start
    looked: list[datetime] = []
    original = rules.rrule.__iter__

    def counting(self: rules.rrule) -> object:
        for occurrence in original(self):
            looked.append(occurrence)
            yield occurrence

    monkeypatch.setattr(rules.rrule, "__iter__", counting)
    assert next_occurrence("FREQ=MINUTELY", start, after) == datetime(2025, 12, 1, 12, 1)
    assert len(looked) <= 3
    looked.clear()
    # With a count nothing is moved: past MAX_LOOKED occurrences the search gives up
    with pytest.raises(RuleTooDense):
        next_occurrence("FREQ=MINUTELY;COUNT=10000000", start, after)
    assert len(looked) == MAX_LOOKED + 1
    looked.clear()
    # A rule with no occurrence stops at the calendar's end, at most 410 years on
    started = time.monotonic()
    assert next_occurrence("FREQ=DAILY;INTERVAL=7;BYDAY=MO", datetime(2025, 1, 7),
                           after) is None
    assert looked == [] and time.monotonic() - started < 5.0


async def test_a_reminders_text_loses_bidi_overrides_and_controls(make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    answer = await desk.services.tools.registry.call(
        "set_reminder", {"when": "2025-12-01T13:00",
                         "text": "pay \u202egnp.exe\u202c now\x1b[2J [click](https://evil.example)"},
        GUEST_CALLER)
    assert "I'll remind you" in answer
    [reminder] = desk.services.reminders.store.pending()
    assert reminder.text == "pay gnp.exe now[2J [click](https://evil.example)"
