"""A booked meeting as iCalendar: the copy the owner's calendar stores, and the guest's iTIP
invitation (``METHOD:REQUEST``, or ``METHOD:CANCEL`` when it is cancelled).

Both carry the same ``UID``, ``SEQUENCE`` (raised by one per reschedule), ``DTSTAMP``,
``ORGANIZER`` (the owner) and ``ATTENDEE`` (the guest). A CAL-ADDRESS is a URI (RFC 5545
§3.3.3, and ``icalendar.vCalAddress`` writes whatever it is given), so a person with no known
email address is named by ``CN`` with a ``urn:uuid:`` derived from who they are — a valid
address no mail is ever sent to — rather than a bare name, which is not one. The stored copy
has no ``METHOD`` (a CalDAV resource must not, RFC 4791 §4.1) and its attendee carries
``SCHEDULE-AGENT=CLIENT`` (RFC 6638 §7.1), so a server that sends invitations itself
(Fastmail, iCloud) leaves that to us and the guest is not invited twice. The video link, when
there is one, is the event's ``LOCATION`` and ``URL`` and ends its ``DESCRIPTION``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.config.text import one_line
from bot.meetings.store import Meeting
from bot.messages import OutgoingFile

REQUEST, CANCEL = "REQUEST", "CANCEL"
PRODID = "-//Frontdesk//meetings//EN"


@dataclass(frozen=True)
class EventParts:
    """What a booking's event holds beyond the meeting's record."""

    uid: str
    sequence: int = 0
    link: str | None = None
    organizer_email: str | None = None  # FRONTDESK_OWNER_EMAIL, else the desk's address
    organizer_name: str = "Frontdesk owner"
    guest_email: str | None = None
    summary: str = "Meeting with {name}: {topic}"


def address(email: str | None, who: str) -> str:
    """A CAL-ADDRESS: ``mailto:`` the address when known, else a ``urn:uuid:`` for ``who``."""
    if email:
        return f"mailto:{email}"
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, 'frontdesk:' + who)}"


def _event(meeting: Meeting, parts: EventParts, now: float, *, stored: bool,
           cancelled: bool = False) -> Any:
    import icalendar  # loaded with the first booking, not at start

    assert meeting.start is not None and meeting.end is not None
    name = one_line(meeting.guest_name, 64) or meeting.guest
    topic = one_line(meeting.topic, 300) or "(no topic)"
    event = icalendar.Event()
    event.add("uid", parts.uid)
    event.add("sequence", parts.sequence)
    event.add("dtstamp", datetime.fromtimestamp(now, UTC))
    event.add("dtstart", meeting.start.astimezone(UTC))
    event.add("dtend", meeting.end.astimezone(UTC))
    event.add("summary", parts.summary.format(name=name, topic=topic))
    described = (f"Guest: {name} ({meeting.platform}, id "
                 f"{meeting.guest.partition(':')[2] or meeting.guest})\n"
                 f"Topic: {topic}\nBooked by Frontdesk (request {meeting.id}).")
    if parts.link:
        described += f"\nJoin: {parts.link}"
        event.add("location", parts.link)
        event.add("url", parts.link)
    event.add("description", described)
    event.add("transp", "OPAQUE")
    event.add("status", "CANCELLED" if cancelled else "CONFIRMED")
    organizer = icalendar.vCalAddress(address(parts.organizer_email, "owner"))
    organizer.params["cn"] = icalendar.vText(parts.organizer_name)
    event.add("organizer", organizer)
    attendee = icalendar.vCalAddress(address(parts.guest_email, meeting.guest))
    attendee.params["cn"] = icalendar.vText(name)
    attendee.params["role"] = icalendar.vText("REQ-PARTICIPANT")
    attendee.params["partstat"] = icalendar.vText("ACCEPTED")  # they picked the time
    if stored:
        attendee.params["schedule-agent"] = icalendar.vText("CLIENT")
    event.add("attendee", attendee)
    return event


def _calendar(event: Any, method: str | None) -> bytes:
    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    if method:
        calendar.add("method", method)
    calendar.add_component(event)
    return bytes(calendar.to_ical())


def stored_event(meeting: Meeting, parts: EventParts, now: float) -> bytes:
    """The VCALENDAR the owner's calendar stores: no METHOD, the attendee client-scheduled."""
    return _calendar(_event(meeting, parts, now, stored=True), None)


def invitation(meeting: Meeting, parts: EventParts, now: float, method: str = REQUEST) -> bytes:
    """The guest's iTIP message: REQUEST (new or moved), or CANCEL (STATUS:CANCELLED)."""
    cancelled = method == CANCEL
    return _calendar(_event(meeting, parts, now, stored=False, cancelled=cancelled), method)


def invitation_file(meeting: Meeting, ics: bytes, zone: tzinfo, method: str = REQUEST
                    ) -> OutgoingFile:
    """The invitation as a chat file, named by its day in ``zone``. A chat document is typed plain
    ``text/calendar`` (the METHOD inside says what it is); an email part would add
    ``; method=…`` to it."""
    assert meeting.start is not None
    stem = "meeting" if method == REQUEST else "cancelled"
    return OutgoingFile(f"{stem}-{meeting.start.astimezone(zone):%Y-%m-%d}.ics",
                        "text/calendar", ics)
