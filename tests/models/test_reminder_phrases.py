"""The offline reminder phrases parse to the right local times; past or unclear ones ask back."""

from __future__ import annotations

from datetime import datetime

import pytest

from bot.models.reminder_phrases import (
    Request,
    WhenUnclear,
    resolve_when,
    split_request,
    tool_arguments,
)
from tests.reminders.conftest import ZONE, berlin

NOW = berlin(2025, 12, 1, 12, 0)  # a Monday, noon

CASES = [
    ("remind me at 17:00 to call Ann", "call Ann", berlin(2025, 12, 1, 17, 0)),
    ("remind me in 10 minutes to stretch", "stretch", berlin(2025, 12, 1, 12, 10)),
    ("remind me tomorrow at 9 to send the invoice", "send the invoice",
     berlin(2025, 12, 2, 9, 0)),
    ("remind me on Friday at 8:30 about the dentist", "the dentist", berlin(2025, 12, 5, 8, 30)),
    ("Remind me to call Ann at 5pm.", "call Ann", berlin(2025, 12, 1, 17, 0)),
    ("remind me on Monday at 9 to plan", "plan", berlin(2025, 12, 8, 9, 0)),  # today's passed
]


@pytest.mark.parametrize(("phrase", "text", "expected"), CASES)
def test_a_one_off_phrase_gives_its_local_time(phrase: str, text: str,
                                                expected: datetime) -> None:
    request = split_request(phrase)
    assert request is not None and request.text == text and request.rrule is None
    when = resolve_when(request.when, ZONE, NOW)
    assert when == expected and when.utcoffset() == expected.utcoffset()


def test_recurring_phrases_give_rrules_and_say_whether_they_are_tasks() -> None:
    assert split_request("every weekday at 8:30 send me my agenda") == Request(
        "at 8:30", "send me my agenda", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", task=True)
    assert split_request("every Monday at 9 remind me to plan the week") == Request(
        "at 9", "plan the week", "FREQ=WEEKLY;BYDAY=MO", task=False)
    anchor = resolve_when("at 8:30", ZONE, NOW, recurring=True)  # past today: fine, an anchor
    assert anchor == berlin(2025, 12, 1, 8, 30)


def test_a_passed_time_is_a_question_not_tomorrow() -> None:
    with pytest.raises(WhenUnclear, match="Mon 1 Dec at 11:00 has already passed"):
        resolve_when("at 11:00", ZONE, NOW)


def test_an_unreadable_time_is_a_question() -> None:
    with pytest.raises(WhenUnclear, match="couldn't tell when \"someday\""):
        resolve_when("someday", ZONE, NOW)


def test_iso_times_are_read_in_the_owners_zone() -> None:
    assert resolve_when("2025-12-01T17:00", ZONE, NOW) == berlin(2025, 12, 1, 17, 0)
    assert resolve_when("2025-12-01T16:00:00+00:00", ZONE, NOW) == berlin(2025, 12, 1, 17, 0)


def test_the_offline_rule_gives_tool_arguments_or_a_question() -> None:
    assert tool_arguments("every weekday at 8:30 send me my agenda") == {
        "when": "at 8:30", "text": "send me my agenda",
        "rrule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "run_prompt": True}
    assert tool_arguments("remind me in 10 minutes to stretch") == {
        "when": "in 10 minutes", "text": "stretch"}
    question = tool_arguments("remind me please")
    assert isinstance(question, str) and "remind me at 17:00 to call Ann" in question
    assert tool_arguments("what is on today?") is None
