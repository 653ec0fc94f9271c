"""The FRONTDESK_MEETING_* settings: defaults, several ranges, and a bad value named."""

from __future__ import annotations

import pytest

from bot.config.settings import Settings


def test_the_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.meeting_hours.ranges(0) == ((9 * 60, 17 * 60),)
    assert settings.meeting_hours.ranges(5) == ()
    assert (settings.meeting_minutes, settings.meeting_buffer, settings.meeting_notice,
            settings.meeting_days, settings.meetings_per_day, settings.meeting_hold) \
        == (30, 10, 4.0, 14, 4, 24.0)


def test_several_ranges_and_groups() -> None:
    hours = Settings.from_env({"FRONTDESK_MEETING_HOURS":
                               "Mon-Thu 09:00-12:00,14:00-18:00; Fri 09:00-13:00"}).meeting_hours
    assert hours.ranges(3) == ((540, 720), (840, 1080))
    assert hours.ranges(4) == ((540, 780),)
    assert hours.ranges(6) == ()


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("FRONTDESK_MEETING_HOURS", "weekdays 9-5", "expected e.g. Mon-Fri 09:00-17:00"),
    ("FRONTDESK_MEETING_HOURS", "Mon-Fri 17:00-09:00", "does not end after it starts"),
    ("FRONTDESK_MEETING_HOURS", "Fri-Mon 09:00-10:00", "runs backwards"),
    ("FRONTDESK_MEETING_MINUTES", "0", "whole number from 5 to 720"),
    ("FRONTDESK_MEETING_BUFFER", "-5", "whole number from 0 to 240"),
    ("FRONTDESK_MEETING_NOTICE", "soon", "number of hours"),
    ("FRONTDESK_MEETING_DAYS", "400", "whole number from 1 to 366"),
    ("FRONTDESK_MEETINGS_PER_DAY", "0", "whole number from 1 to 48"),
    ("FRONTDESK_MEETING_HOLD", "0", "number of hours above 0"),
])
def test_a_bad_value_names_the_variable_and_what_is_expected(name: str, value: str,
                                                             expected: str) -> None:
    with pytest.raises(ValueError) as raised:
        Settings.from_env({name: value})
    assert str(raised.value).startswith(f"{name}=") and expected in str(raised.value)
