"""`frontdesk meetings [--json]`: every meeting request and booking, soonest first.

``--json`` prints a list of ``{"id", "status", "start", "end", "guest", "guest_id",
"platform", "topic", "uid", "guest_zone", "link", "sequence", "reminders"}`` (times ISO 8601
with the owner's offset; ``uid``, ``link`` and ``sequence`` null before booking; ``reminders``
the lead times still to fire, e.g. ``["1d", "15m"]``; ``guest_zone`` the guest's own zone
as stored — ``Asia/Tokyo``, ``UTC+02:00`` — null until they give it). A guest's name and
topic are their words: shown as one line with no terminal escape.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from bot.access.people import People
from bot.config.settings import Settings
from bot.config.text import shown
from bot.meetings.aftercare import still_to_fire
from bot.meetings.extras import MeetingExtras
from bot.meetings.store import Meeting, MeetingStore
from bot.reminders.store import Reminders
from bot.schema import open_database


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the requests and bookings (the owner's view: everyone's)."""
    found: list[Meeting] = []
    rows: list[dict[str, Any]] = []
    if settings.database.exists():
        with open_database(settings.database) as db:  # the meetings and their extras
            found = MeetingStore(db).listing(limit=10_000)
            zones = People(db).zones()  # each guest's own zone, as they gave it
            extras, reminders = MeetingExtras(db), Reminders(db)
            rows = [with_extras(m, extras, reminders, zones) for m in found]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not found:
        print("No meeting requests yet.")
    for meeting in found:
        print(list_line(meeting))
    return 0


def list_line(meeting: Meeting) -> str:
    """status, time, who, topic, id."""
    when = f"{meeting.start:%a %d %b %Y %H:%M}–{meeting.end:%H:%M %Z}" \
        if meeting.start and meeting.end else "(no time picked)"
    who = f"{shown(meeting.guest_name, 'log')} ({meeting.platform})"
    return (f"{meeting.status:<9} {when:<34} {who:<30} {shown(meeting.topic, 'log') or '-'}"
            f"  [{meeting.id}]")


def with_extras(meeting: Meeting, extras: MeetingExtras, reminders: Reminders,
                zones: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A meeting's JSON with the guest's zone (``zones``: by scope, ``People.zones``), its
    link, SEQUENCE and the reminder lead times still to fire."""
    row = meeting.to_json()
    row.update(guest_zone=(zones or {}).get(meeting.guest),
               link=extras.link(meeting.uid) if meeting.uid else None,
               sequence=extras.sequence(meeting.uid) if meeting.uid else None,
               reminders=still_to_fire(reminders, meeting.uid
                                       if meeting.status == "booked" else None))
    return row
