"""The settings of a booked meeting's extras, read and checked: who the invitation is from
(``FRONTDESK_OWNER_EMAIL``), the video link (``FRONTDESK_MEETING_LINK``) and the reminders
before it (``FRONTDESK_MEETING_REMIND``). Each bad value is a ValueError naming its variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.config.values import shown

_EMAIL = re.compile(r"[^\s@<>\"]+@[^\s@<>\"]+\.[^\s@<>\"]+")
_LEAD = re.compile(r"([0-9]+)\s*(m|min|h|d)")
_UNIT_MINUTES = {"m": 1, "min": 1, "h": 60, "d": 24 * 60}
DEFAULT_REMIND = "1d,15m"


def owner_email(get: Callable[[str], str | None]) -> str | None:
    """FRONTDESK_OWNER_EMAIL, else the desk's FRONTDESK_EMAIL_ADDRESS, else None."""
    for name in ("FRONTDESK_OWNER_EMAIL", "FRONTDESK_EMAIL_ADDRESS"):
        raw = get(name)
        if raw is None or not raw.strip():
            continue
        if not _EMAIL.fullmatch(raw.strip()):
            raise ValueError(f"{shown(name, raw)} is not an email address, "
                             "e.g. ann@example.org")
        return raw.strip()
    return None


def meeting_link(name: str, raw: str | None) -> str:
    """``off``, ``jitsi``, or an https URL template holding ``{uid}``."""
    if raw is None or not raw.strip():
        return "off"
    value = raw.strip()
    if value.lower() in ("off", "jitsi"):
        return value.lower()
    if re.fullmatch(r"https?://[^\s/]+\S*", value) and "{uid}" in value:
        try:
            value.format(uid="x")
        except (IndexError, KeyError, ValueError):
            pass
        else:
            return value
    raise ValueError(f"{shown(name, raw)} is not off, jitsi or a URL with {{uid}} in it, "
                     "e.g. https://meet.example.org/{uid}")


def remind_leads(name: str, raw: str | None) -> tuple[int, ...]:
    """Lead times in minutes, longest first: ``1d,15m`` (units m, h, d); ``off``: none."""
    text = DEFAULT_REMIND if raw is None or not raw.strip() else raw.strip().lower()
    if text == "off":
        return ()
    leads: set[int] = set()
    for part in text.split(","):
        found = _LEAD.fullmatch(part.strip())
        if not found or not 0 < int(found[1]) * _UNIT_MINUTES[found[2]] <= 30 * 24 * 60:
            raise ValueError(f"{shown(name, raw or '')} is not off or lead times such as "
                             "1d,15m (m, h or d; up to 30 days)")
        leads.add(int(found[1]) * _UNIT_MINUTES[found[2]])
    return tuple(sorted(leads, reverse=True))


def invitation_settings(get: Callable[[str], str | None]) -> dict[str, Any]:
    """The three settings, as ``Settings`` fields."""
    return {"owner_email": owner_email(get),
            "meeting_link": meeting_link("FRONTDESK_MEETING_LINK",
                                         get("FRONTDESK_MEETING_LINK")),
            "meeting_remind": remind_leads("FRONTDESK_MEETING_REMIND",
                                           get("FRONTDESK_MEETING_REMIND"))}
