"""A booked meeting's video link, as ``FRONTDESK_MEETING_LINK`` says: none (``off``), a Jitsi
room whose name carries 96 random bits (``jitsi``), or the owner's URL template with the
event's UID in place of ``{uid}``. Chosen once per event and stored with it
(``MeetingExtras.link_for``), so a replay, a reminder and a reschedule all show the same one.
"""

from __future__ import annotations

import secrets
from urllib.parse import quote

JITSI = "https://meet.jit.si/"
ROOM_BITS = 96  # at least 80, as the issue asks: the room name is its only lock


def new_link(setting: str, uid: str) -> str | None:
    """A fresh link for the event ``uid``; None when links are off."""
    if setting == "off":
        return None
    if setting == "jitsi":
        return f"{JITSI}Frontdesk-{secrets.token_hex(ROOM_BITS // 8)}"
    return setting.format(uid=quote(uid, safe=""))
