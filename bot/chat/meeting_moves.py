"""A booking's **Reschedule** press: new times offered in one step, the old time kept booked
until the new one is approved (``bot.meetings.moving`` then moves the same event).

The press starts a ``meeting`` run whose request is recorded as moving the booking
(``MeetingExtras.moving``). The guest's own press: they pick, the owner approves. The owner's
press: the owner picks in their own chat (no second question) and the guest is told with the
updated invitation. A press again while that reschedule is open takes the same run; after it
ended (booked, declined, expired) a new one starts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.chat.chat_runs import ChatRunner
from bot.delivery.buttons import Buttons
from bot.delivery.outbox import Outbox
from bot.meetings.desk import MeetingDesk
from bot.meetings.store import OPEN, Meeting, MeetingStore


class MeetingChat(Protocol):
    """What a reschedule uses of ``bot.chat.meetings.MeetingChat``."""

    store: MeetingStore
    desk: MeetingDesk
    button_tokens: Buttons
    outbox: Outbox
    runner: ChatRunner
    owner_place: Callable[[str], Awaitable[tuple[str, str]]] | None

    def when_of(self, meeting: Meeting, for_owner: bool = True) -> str: ...

WORKFLOW = "meeting"


def move_run_id(chat: MeetingChat, meeting: Meeting) -> str:
    """The reschedule run for this booking: the open one, else the next."""
    assert chat.desk.aftercare is not None
    extras = chat.desk.aftercare.extras
    count = extras.moves_of(meeting.id)
    if count:
        last = _run_id(meeting.id, count - 1)
        request = chat.store.get(last)
        if request is None or request.status in OPEN:
            return last
    return _run_id(meeting.id, count)


def _run_id(meeting_id: str, number: int) -> str:
    return "meet-move-" + hashlib.sha256(f"{meeting_id}:{number}".encode()).hexdigest()[:20]


async def start_move(chat: MeetingChat, meeting: Meeting, is_owner: bool, platform: str,
                     user_id: str) -> str:
    """Offer new times for ``meeting`` (to the guest, or to the owner who pressed); the
    presser's sentence."""
    assert chat.desk.aftercare is not None and meeting.slot is not None
    run_id = move_run_id(chat, meeting)
    chat.desk.aftercare.extras.moving(run_id, meeting.id, by_owner=is_owner)
    where = (meeting.platform, meeting.chat_id)
    if is_owner:  # the owner picks in their own chat
        where = await chat.owner_place(platform) if chat.owner_place else (platform, user_id)
    what = chat.when_of(meeting, is_owner)
    minutes = int((meeting.slot.end - meeting.slot.start).total_seconds() // 60)
    sender = {"scope": meeting.guest, "is_owner": is_owner, "platform": meeting.platform,
              "chat_id": meeting.chat_id, "message_id": "", "name": meeting.guest_name}
    note = (f"Rescheduling the meeting on {what}: it stays booked until "
            + ("you pick a new time." if is_owner else "the owner confirms a new one."))
    state = await chat.runner.start(
        WORKFLOW, lambda: {"topic": meeting.topic, "sender": sender, "minutes": minutes,
                           "earliest": None, "latest": None, "note": note},
        run_id, *where)
    if state.status != "waiting" or not state.waits:
        return str(state.get("reply") or "I could not look for a new time just now.")
    wait = state.waits[0]
    await chat.outbox.deliver(where[0], where[1], f"meeting-offer:{run_id}:{wait['key']}",
                              str(wait.get("question") or ""),
                              chat.button_tokens.for_wait(state.run_id or "", wait))
    return f"Rescheduling {what}: new times are below; the old time stays booked until " \
        "a new one is confirmed."
