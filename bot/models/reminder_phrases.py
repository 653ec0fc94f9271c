"""Reminder phrases in English, offline: "remind me … to …", "every … at …", and their times.

``split_request`` cuts a message into when, what and (for "every …") an iCalendar RRULE, with
no date arithmetic; ``resolve_when`` turns the *when* into an aware local time: ISO 8601
first, else ``dateparser`` in the owner's zone. A time that does not parse, or has passed,
raises ``WhenUnclear`` carrying the question to ask back: never a guess.

Usage::

    request = split_request("remind me tomorrow at 9 to send the invoice")
    # Request(when='tomorrow at 9', text='send the invoice', rrule=None, task=False)
    when = resolve_when(request.when, ZoneInfo("Europe/Berlin"), now)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any


def local_label(moment: datetime) -> str:
    """'Tue 1 Dec at 17:00'."""
    return f"{moment:%a} {moment.day} {moment:%b} at {moment:%H:%M}"


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
BYDAY = {day: day[:2].upper() for day in WEEKDAYS}
EVERY: dict[str, str] = {
    "day": "FREQ=DAILY", "morning": "FREQ=DAILY", "evening": "FREQ=DAILY",
    "weekday": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "workday": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
    "weekend": "FREQ=WEEKLY;BYDAY=SA,SU", "week": "FREQ=WEEKLY", "month": "FREQ=MONTHLY",
    **{day: f"FREQ=WEEKLY;BYDAY={code}" for day, code in BYDAY.items()},
}
_TIME = r"\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|noon|midnight"
_WHEN_WORDS = (r"(?:in\s+\S+\s+\w+|at\s+(?:" + _TIME + r")|on\s+\w+(?:\s+\w+)?|today|tonight|"
               r"tomorrow|next\s+\w+|this\s+\w+)")
# "remind me <when> to|about|that <what>"
REMIND_WHEN_FIRST = re.compile(
    r"^\s*(?:please\s+)?remind\s+me\s+(?P<when>.+?)\s+(?:to|about|that|of)\s+(?P<what>.+?)"
    r"[\s.!]*$", re.IGNORECASE | re.DOTALL)
# "remind me to|about <what> <when>"
REMIND_WHAT_FIRST = re.compile(
    r"^\s*(?:please\s+)?remind\s+me\s+(?:to|about|of)\s+(?P<what>.+?)\s+"
    r"(?P<when>" + _WHEN_WORDS + r"(?:\s+" + _WHEN_WORDS + r")*)[\s.!]*$",
    re.IGNORECASE | re.DOTALL)
# "every <period> at <time> [remind me to|about] <what>"
EVERY_PHRASE = re.compile(
    r"^\s*(?:please\s+)?(?:remind\s+me\s+)?every\s+(?P<period>[a-z]+)\s+at\s+"
    r"(?P<time>" + _TIME + r")\s*,?\s+(?:(?P<remind>remind\s+me\s+(?:to|about|of)\s+))?"
    r"(?P<what>.+?)[\s.!]*$", re.IGNORECASE | re.DOTALL)
_BARE_HOUR = re.compile(r"\bat\s+(\d{1,2})(?![\d:.]|\s*(?:am|pm|a\.m\.|p\.m\.))", re.IGNORECASE)
_NAMES_A_DAY = re.compile(r"\b(" + "|".join(WEEKDAYS) + r"|jan|feb|mar|apr|may|jun|jul|aug|"
                          r"sep|oct|nov|dec)\w*\b", re.IGNORECASE)


@dataclass(frozen=True)
class Request:
    """What a reminder phrase asks for: when (still words), what, and how it repeats."""

    when: str
    text: str
    rrule: str | None = None
    task: bool = False  # "every … send me my agenda": a request to carry out, not a text


class WhenUnclear(ValueError):
    """The time cannot be used; ``str(exc)`` is the question to ask back."""


def is_reminder_request(text: str) -> bool:
    """Does the message ask for a reminder or a scheduled task?"""
    return bool(re.match(r"^\s*(?:please\s+)?(?:remind\s+me\b|every\s+[a-z]+\s+at\b)", text,
                         re.IGNORECASE))


def split_request(text: str) -> Request | None:
    """The parts of a reminder phrase; None when the message is not one we can read."""
    every = EVERY_PHRASE.match(text)
    if every:
        rule = EVERY.get(every.group("period").lower())
        if rule is None:
            return None
        what = every.group("what").strip()
        task = every.group("remind") is None and not what.lower().startswith("remind")
        return Request(when=f"at {every.group('time')}", text=what, rrule=rule, task=task)
    for pattern in (REMIND_WHAT_FIRST, REMIND_WHEN_FIRST):
        found = pattern.match(text)
        if found:
            return Request(when=found.group("when").strip(), text=found.group("what").strip())
    return None


def tool_arguments(text: str) -> dict[str, Any] | str | None:
    """The offline agent's rule: set_reminder's arguments for a reminder phrase, the question
    to ask when it is one but cannot be read, None when it is not one."""
    if not is_reminder_request(text):
        return None
    request = split_request(text)
    if request is None:
        return ("I couldn't read that reminder. Say it like \"remind me at 17:00 to call Ann\", "
                "\"remind me in 10 minutes to stretch\" or \"every Monday at 9 remind me to "
                "plan the week\".")
    arguments: dict[str, Any] = {"when": request.when, "text": request.text}
    if request.rrule:
        arguments["rrule"] = request.rrule
    if request.task:
        arguments["run_prompt"] = True
    return arguments


def normalise(when: str) -> str:
    """'at 9' -> 'at 9:00' (dateparser reads a bare hour as a day of the month)."""
    return _BARE_HOUR.sub(lambda m: f"at {m.group(1)}:00", when.strip())


def resolve_when(when: str, zone: tzinfo, now: datetime, *, recurring: bool = False) -> datetime:
    """``when`` as an aware time in ``zone``: ISO 8601 (naive read in the zone), else English.

    A weekday or a month ("on Friday", "3 March") means the next one; a time of day alone
    means today, so one that has passed is a question, not tomorrow. ``recurring``: the time
    only anchors a rule, so a past one is fine.
    """
    import dateparser  # here: it takes a while to import, and only reminders need it

    local_now = now.astimezone(zone)
    found = _iso(when, zone)
    if found is None:
        prefer = "future" if _NAMES_A_DAY.search(when) else "current_period"
        parsed = dateparser.parse(normalise(when), languages=["en"], settings={
            "TIMEZONE": str(getattr(zone, "key", zone)), "RETURN_AS_TIMEZONE_AWARE": False,
            "PREFER_DATES_FROM": prefer, "RELATIVE_BASE": local_now.replace(tzinfo=None)})
        if parsed is None:
            raise WhenUnclear(f"I couldn't tell when \"{when}\" is. When should I remind you? "
                              "(e.g. \"at 17:00\", \"in 10 minutes\", \"tomorrow at 9\")")
        found = parsed.replace(tzinfo=zone)
    if not recurring and found <= local_now:
        raise WhenUnclear(f"{local_label(found)} has already passed. When should I remind "
                          "you instead?")
    return found


def _iso(when: str, zone: tzinfo) -> datetime | None:
    """An ISO 8601 time in ``zone`` (naive ones are read in it), or None."""
    try:
        moment = datetime.fromisoformat(when.strip())
    except ValueError:
        return None
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)
