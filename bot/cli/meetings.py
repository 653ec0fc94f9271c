"""`frontdesk meetings [--json]`: every meeting request and booking, soonest first.

``--json`` prints a list of ``{"id", "status", "start", "end", "guest", "guest_id",
"platform", "topic", "uid"}`` (times ISO 8601 with the owner's offset; ``uid`` null before
booking). A guest's name and topic are their words: shown as one line with no terminal escape.
"""

from __future__ import annotations

import argparse
import json

from bot.config.settings import Settings
from bot.config.text import shown
from bot.meetings.store import Meeting, MeetingStore
from bot.schema import open_database


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the requests and bookings (the owner's view: everyone's)."""
    found: list[Meeting] = []
    if settings.database.exists():
        with open_database(settings.database) as db:  # the meetings alone
            found = MeetingStore(db).listing(limit=10_000)
    if args.json:
        print(json.dumps([meeting.to_json() for meeting in found], ensure_ascii=False))
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
