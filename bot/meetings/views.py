"""A meeting's time as each side reads it: the guest's zone first for the guest, the owner's
first for the owner (``bot.meetings.zones`` formats; this looks the guest's zone up)."""

from __future__ import annotations

from datetime import tzinfo

from bot.meetings.store import Meeting
from bot.meetings.zones import GuestZones, format_for_guest, format_for_owner


class MeetingTimes:
    """Mixed into ``MeetingDesk`` (and ``Aftercare``): needs the owner's zone and the guests'."""

    zones: GuestZones | None  # each guest's time zone (``bot.chat.timezones``)

    @property
    def owner_zone(self) -> tzinfo:
        raise NotImplementedError

    def guest_zone(self, scope: str) -> tzinfo | None:
        """The guest's time zone when known (never the owner's own: that is the rules')."""
        return self.zones.zone_of(scope) if self.zones is not None and scope != "owner" \
            else None

    def owner_when(self, meeting: Meeting) -> str:
        """The owner's view: their zone, the guest's beside it when it differs."""
        if meeting.slot is None:
            return "(no time yet)"
        return format_for_owner(meeting.slot.start, meeting.slot.end, self.owner_zone,
                                self.guest_zone(meeting.guest))

    def guest_when(self, meeting: Meeting) -> str:
        """The guest's view: their time first, the owner's beside it when it differs."""
        if meeting.slot is None:
            return "(no time yet)"
        return format_for_guest(meeting.slot.start, meeting.slot.end,
                                self.guest_zone(meeting.guest), self.owner_zone)
