"""A guest's time zone: read from what they type, and times shown in it beside the owner's.

``parse_zone`` takes an IANA name (``Europe/Paris``, any case, through ``zoneinfo``), a city
that names an IANA zone (``Tokyo``, ``New York``: the zone database's own city names), a
common city the database leaves out (``CITIES``, a small table: San Francisco, Beijing, …),
or an offset from UTC (``UTC+2``, ``GMT-05:30``: a fixed offset). ``zone_in_words`` finds a
zone in a sentence ("I'm in Tokyo"). ``format_for_guest`` is the one way a meeting's time is
shown to a guest — ``Tue 8 Dec 16:00–16:30 your time (10:00 in Berlin)`` — and
``format_for_owner`` the owner's: their own zone, the guest's beside it. Reminders and
invitations call the same functions.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache
from typing import Protocol
from zoneinfo import ZoneInfo, available_timezones

ASK = "Which time zone are you in? For example New York, Europe/Paris or UTC+2"
EXAMPLES = "a city (New York, Tokyo), a zone name (Europe/Paris) or an offset (UTC+2)"
# Common cities the zone database has no zone of their own for (it names one city a zone).
CITIES = {
    "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles",
    "washington": "America/New_York", "boston": "America/New_York",
    "miami": "America/New_York", "atlanta": "America/New_York",
    "dallas": "America/Chicago", "houston": "America/Chicago", "austin": "America/Chicago",
    "beijing": "Asia/Shanghai", "hong kong": "Asia/Hong_Kong", "mumbai": "Asia/Kolkata",
    "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "bangalore": "Asia/Kolkata",
    "munich": "Europe/Berlin", "frankfurt": "Europe/Berlin", "hamburg": "Europe/Berlin",
    "barcelona": "Europe/Madrid", "milan": "Europe/Rome", "geneva": "Europe/Zurich",
    "st petersburg": "Europe/Moscow", "osaka": "Asia/Tokyo", "kyoto": "Asia/Tokyo",
    "sao paulo": "America/Sao_Paulo", "rio de janeiro": "America/Sao_Paulo",
    "cape town": "Africa/Johannesburg", "tel aviv": "Asia/Jerusalem",
    "canberra": "Australia/Sydney", "wellington": "Pacific/Auckland",
}
OFFSET = re.compile(r"(?:utc|gmt)\s*([+-−])\s*(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)
SAYS_WHERE = re.compile(
    r"\b(?:i'?m|i am|we'?re|we are|i live|i'?m based|i am based|living|based)\s+(?:in|at)\s+"
    r"|\bmy time ?zone is\s+|\bmy zone is\s+", re.IGNORECASE)


class GuestZones(Protocol):
    """Where a person's zone is kept (``bot.access.people``'s ``person_zones``)."""

    def zone_of(self, scope: str) -> tzinfo | None:
        """The person's zone, None when it is not known."""
        ...

    def ask_once(self, scope: str) -> bool:
        """True the first time only: the caller asks the person for their zone."""
        ...


@cache
def _by_lower_name() -> dict[str, str]:
    """Every IANA name, and each zone's city ('tokyo', 'new york'), by its lower case."""
    names: dict[str, str] = {}
    for name in sorted(available_timezones()):
        names.setdefault(name.lower(), name)
        if "/" in name and not name.startswith(("Etc/", "SystemV/", "US/")):
            names.setdefault(name.rsplit("/", 1)[1].replace("_", " ").lower(), name)
    return names


def parse_zone(text: str) -> tzinfo | None:
    """The zone ``text`` names, or None (see the module's docstring for what is read)."""
    words = " ".join(text.strip().strip(".!?").split())
    if not words or len(words) > 60:
        return None
    if match := OFFSET.fullmatch(words):
        sign = -1 if match[1] in "-−" else 1
        hours, minutes = int(match[2]), int(match[3] or 0)
        if hours > 14 or minutes >= 60:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        return timezone(sign * offset, f"UTC{'-' if sign < 0 else '+'}{hours:02d}:{minutes:02d}")
    lower = words.lower().replace(".", "")
    if lower in ("utc", "gmt", "z"):
        return ZoneInfo("UTC")
    name = CITIES.get(lower) or _by_lower_name().get(lower) \
        or _by_lower_name().get(lower.replace(" ", "_"))
    return ZoneInfo(name) if name else None


def zone_in_words(text: str) -> tzinfo | None:
    """A zone named in a sentence: "I'm in Tokyo", "my time zone is UTC+2"; else None."""
    match = SAYS_WHERE.search(text)
    if match is None:
        return None
    rest = re.split(r"[,;!?]| and | but | so ", text[match.end():], maxsplit=1)[0]
    words = rest.strip().rstrip(".").split()
    for count in range(min(len(words), 3), 0, -1):  # "New York this week": the longest name
        if zone := parse_zone(" ".join(words[:count])):
            return zone
    return None


def zone_key(zone: tzinfo) -> str:
    """How a zone is stored and shown: its IANA name, or ``UTC+02:00``."""
    return str(getattr(zone, "key", None) or zone.tzname(None) or zone)


def place(zone: tzinfo) -> str:
    """A zone as a place, for "10:00 in Berlin": the city of an IANA name, else its name."""
    key = zone_key(zone)
    return key.rsplit("/", 1)[1].replace("_", " ") if "/" in key else key


def same_clock(one: tzinfo, other: tzinfo, at: datetime) -> bool:
    """Whether both zones show the same time at ``at``."""
    return at.astimezone(one).utcoffset() == at.astimezone(other).utcoffset()


def day_and_time(moment: datetime) -> str:
    """'Tue 8 Dec 16:00'."""
    return f"{moment:%a} {moment.day} {moment:%b %H:%M}"


def format_for_guest(start: datetime, end: datetime, guest_zone: tzinfo | None,
                     owner_zone: tzinfo) -> str:
    """A meeting's time as its guest reads it: ``Tue 8 Dec 16:00–16:30 your time (10:00 in
    Berlin)``; in the owner's zone alone (``Tue 8 Dec 10:00–10:30 (Europe/Berlin)``) when the
    guest's is not known or shows the same time."""
    if guest_zone is None or same_clock(guest_zone, owner_zone, start):
        return format_for_owner(start, end, owner_zone, None)
    first, last = start.astimezone(guest_zone), end.astimezone(guest_zone)
    theirs = start.astimezone(owner_zone)
    owner_at = f"{theirs:%H:%M}" if theirs.date() == first.date() else day_and_time(theirs)
    return f"{day_and_time(first)}–{last:%H:%M} your time ({owner_at} in {place(owner_zone)})"


def format_for_owner(start: datetime, end: datetime, owner_zone: tzinfo,
                     guest_zone: tzinfo | None) -> str:
    """The owner's view: ``Tue 8 Dec 10:00–10:30 (Europe/Berlin; 18:00 for the guest, in
    Tokyo)``; the guest's part left out when unknown or the same."""
    first, last = start.astimezone(owner_zone), end.astimezone(owner_zone)
    shown = f"{day_and_time(first)}–{last:%H:%M} ({zone_key(owner_zone)}"
    if guest_zone is None or same_clock(guest_zone, owner_zone, start):
        return shown + ")"
    theirs = start.astimezone(guest_zone)
    at = f"{theirs:%H:%M}" if theirs.date() == first.date() else day_and_time(theirs)
    return f"{shown}; {at} for the guest, in {place(guest_zone)})"


def button_label(start: datetime, zone: tzinfo) -> str:
    """A slot's button: its day and start in ``zone`` (the guest's when known)."""
    return day_and_time(start.astimezone(zone))
