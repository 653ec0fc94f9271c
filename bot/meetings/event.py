"""A booked meeting as an iCalendar event: its UID (derived from the request) and its bytes.

Written with ``icalendar``. The UID is a pure function of the request's id, so every try and
every crash replay of Book names the same event, and the calendar's ``If-None-Match: *`` (and
the ``exists`` look-up before it) keeps it to one. Times are written in UTC, which every
calendar reads without a VTIMEZONE. ``event_file`` is the same bytes as the file a chat
message carries (``meeting-2026-03-03.ics``, ``text/calendar``).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, tzinfo

from bot.config.text import one_line
from bot.meetings.store import Meeting
from bot.messages import OutgoingFile


def uid_for(meeting_id: str) -> str:
    """The event's UID for a request: the same on every try."""
    digest = hashlib.sha256(meeting_id.encode()).hexdigest()[:24]
    return f"frontdesk-meeting-{digest}@frontdesk"


def event_ics(meeting: Meeting, uid: str, summary: str, now: float) -> bytes:
    """A VCALENDAR with the one VEVENT: SUMMARY from ``summary`` (``{name}``, ``{topic}``),
    the guest and their platform in DESCRIPTION."""
    import icalendar  # loaded with the first booking, not at start

    assert meeting.start is not None and meeting.end is not None
    name = one_line(meeting.guest_name, 64) or meeting.guest
    topic = one_line(meeting.topic, 300) or "(no topic)"
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Frontdesk//meetings//EN")
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", uid)
    event.add("dtstamp", datetime.fromtimestamp(now, UTC))
    event.add("dtstart", meeting.start.astimezone(UTC))
    event.add("dtend", meeting.end.astimezone(UTC))
    event.add("summary", summary.format(name=name, topic=topic))
    event.add("description", f"Guest: {name} ({meeting.platform}, id "
                             f"{meeting.guest.partition(':')[2] or meeting.guest})\n"
                             f"Topic: {topic}\nBooked by Frontdesk (request {meeting.id}).")
    event.add("transp", "OPAQUE")
    calendar.add_component(event)
    return bytes(calendar.to_ical())


def event_file(meeting: Meeting, ics: bytes, zone: tzinfo) -> OutgoingFile:
    """The event as a chat file, named by its day in the owner's zone."""
    assert meeting.start is not None
    return OutgoingFile(f"meeting-{meeting.start.astimezone(zone):%Y-%m-%d}.ics",
                        "text/calendar", ics)
