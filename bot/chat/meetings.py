"""Meetings in the chat: the model's ``propose_meeting``, ``/meetings`` with its Cancel buttons,
and a press on Cancel.

``propose`` starts the ``meeting`` workflow (``graphs.workflows.meeting``) for whoever wrote,
with a run id derived from the tool call (a replay after a crash continues that run, never a
second), and sends its offer — the slots as buttons — to that chat. ``listing`` shows a
person's own upcoming bookings (the owner sees all that Frontdesk made), each with a Cancel
button; ``press`` takes a Cancel from that person or the owner and deletes the event exactly
once (the calendar's ``cancel`` by UID is idempotent, and the record moves from ``booked``
only once), then tells the owner (or the guest, when the owner cancelled).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.access.allowlist import Access
from bot.calendar.writer import CalendarUnavailable
from bot.chat.chat_runs import ChatRunner
from bot.chat.meeting_moves import start_move
from bot.config.text import one_line, shown
from bot.delivery.buttons import Buttons, ButtonTarget
from bot.delivery.outbox import Outbox
from bot.meetings.desk import MeetingDesk, upcoming
from bot.meetings.invitation import CANCEL as CANCEL_METHOD
from bot.meetings.store import Meeting, MeetingStore
from bot.messages import WITHOUT_BUTTONS, PressResult, Reply, numbered_choices
from bot.tools.registry import Caller

KIND = "meeting"  # the kind of a booking's buttons (``bot.delivery.buttons``)
CANCEL = "meeting-cancel:"  # the run id of a Cancel button: this + the meeting's id (no run)
RESCHEDULE = "meeting-move:"  # the run id of a Reschedule button: this + the meeting's id
WORKFLOW = "meeting"
OFFER_FOR = "offer_for"  # a meeting run's meta: the message whose reply its offer is
OwnerPlace = Callable[[str], Awaitable[tuple[str, str]]]


class MeetingChat:
    """The meetings' chat side: start a request, list bookings, cancel one."""

    def __init__(self, *, store: MeetingStore, desk: MeetingDesk, buttons: Buttons,
                 outbox: Outbox, runner: ChatRunner, access: Access,
                 clock: Callable[[], float] = time.time,
                 owner_place: OwnerPlace | None = None) -> None:
        self.store = store
        self.desk = desk
        self.button_tokens = buttons
        self.outbox = outbox
        self.runner = runner
        self.access = access
        self.clock = clock
        self.owner_place = owner_place  # the owner's chat (a Reschedule the owner pressed)

    # -- propose_meeting -------------------------------------------------------------------
    async def propose(self, caller: Caller, topic: str, minutes: int | None = None,
                      earliest: str | None = None, latest: str | None = None) -> str:
        """Start the meeting workflow for the caller and send its offer to their chat."""
        run_id = self.run_id_for(caller)
        sender = {"scope": caller.scope, "is_owner": caller.is_owner,
                  "platform": caller.platform, "chat_id": caller.chat_id,
                  "message_id": caller.message_id, "name": caller.name or caller.scope}
        numbered = caller.platform in WITHOUT_BUTTONS  # the offer is the reply itself
        state = await self.runner.start(
            WORKFLOW, lambda: {"topic": topic, "sender": sender, "minutes": minutes,
                               "earliest": earliest, "latest": latest},
            run_id, caller.platform, caller.chat_id,
            {OFFER_FOR: caller.message_id} if numbered and caller.message_id else None)
        if state.status == "failed":  # its request is closed and the failure logged
            return ("Looking for a time failed (it has been logged); the request is closed, "
                    "so the person can ask again.")
        if state.status != "waiting" or not state.waits:
            return str(state.get("reply") or "I could not look for a time just now.")
        wait = state.waits[0]
        if numbered and caller.message_id:  # one mail: ``offer_for`` makes it the reply
            return (f"{len(wait.get('options') or []) - 1} free times go to the person as a "
                    "numbered list, as this reply; they answer with a number and the owner "
                    "confirms it. Do not list or promise times yourself.")
        await self.outbox.deliver(caller.platform, caller.chat_id,
                                  f"meeting-offer:{run_id}:{wait['key']}",
                                  str(wait.get("question") or ""),
                                  self.button_tokens.for_wait(state.run_id or "", wait))
        return (f"I sent {len(wait.get('options') or []) - 1} free times to this chat as "
                "buttons; the person picks one there and the owner confirms it. Do not list "
                "or promise times yourself.")

    def offer_for(self, platform: str, chat_id: str, message_id: str) -> str | None:
        """The open offer a message's ``propose_meeting`` made on a platform without buttons,
        as the text of that message's one reply (the times numbered), or None. Read from the
        meeting run's wait, so after a crash the same reply is made again."""
        for wait in self.runner.store.waits("open"):
            meta = wait.meta
            if (wait.workflow == WORKFLOW and meta.get(OFFER_FOR) == message_id
                    and meta.get("platform") == platform and meta.get("chat_id") == chat_id):
                return numbered_choices(wait.question, list(wait.options))
        return None

    async def move(self, caller: Caller, earliest: str | None = None,
                   latest: str | None = None) -> str:
        """Reschedule in one step: cancel the caller's next booking and offer new times (a
        replay of the same call finds its request started and cancels nothing more)."""
        if not self.runner.exists(self.run_id_for(caller)):
            mine = upcoming(self.store, caller.scope, self.clock())
            if not mine:
                return "There is no upcoming meeting booked through me to move."
            try:
                await self.cancel(mine[0], by_owner=caller.is_owner, moved=True)
            except CalendarUnavailable:
                return "The calendar cannot be reached just now, so nothing was moved."
            topic = mine[0].topic
        else:
            topic = ""
        return await self.propose(caller, topic, None, earliest, latest)

    @staticmethod
    def run_id_for(caller: Caller) -> str:
        """The meeting run one tool call starts: the same on a replay of that call."""
        seed = caller.effect_key or f"{caller.platform}|{caller.chat_id}|{caller.message_id}"
        return "meet-" + hashlib.sha256(seed.encode()).hexdigest()[:20]

    # -- /meetings ---------------------------------------------------------------------------
    def listing(self, scope: str, is_owner: bool) -> Reply:
        """The person's upcoming bookings (the owner: all of Frontdesk's), each cancellable."""
        found = upcoming(self.store, None if is_owner else scope, self.clock())
        if not found:
            return Reply("No upcoming meetings booked through me. Ask for one with /meet.",
                         "command")
        lines, buttons = ["Upcoming meetings:"], []
        for number, meeting in enumerate(found[:20], start=1):
            who = f" with {shown(one_line(meeting.guest_name, 64), 'markdown')}" \
                if is_owner else ""
            lines.append(f"{number}. {self.when_of(meeting, is_owner)}{who}: "
                         f"{shown(one_line(meeting.topic, 80), 'markdown') or '(no topic)'}")
            buttons += self.button_tokens.for_options(KIND, f"{CANCEL}{meeting.id}", "cancel",
                                                      [("Cancel", f"Cancel {number}")])
            if self.desk.aftercare is not None:
                buttons += self.button_tokens.for_options(
                    KIND, f"{RESCHEDULE}{meeting.id}", "move",
                    [("Reschedule", f"Reschedule {number}")])
        return Reply("\n".join(lines), "command", buttons=buttons)

    async def press(self, target: ButtonTarget, platform: str, user_id: str) -> PressResult:
        """A Cancel or Reschedule press: the meeting's guest or the owner; a cancel deletes
        the event exactly once, a reschedule offers new times (``bot.chat.meeting_moves``)."""
        moving = target.run_id.startswith(RESCHEDULE)
        meeting = self.store.get(target.run_id.removeprefix(RESCHEDULE if moving
                                                            else CANCEL))
        level = self.access.level(platform, user_id)
        if meeting is None or level is None:
            return PressResult("This button is not valid (anymore).", False)
        is_owner = level == "owner"
        if not is_owner and meeting.guest != f"{platform}:{user_id}":
            return PressResult("Only the owner or the guest can cancel this meeting.", False)
        if meeting.status != "booked":
            return PressResult("This meeting was cancelled already.", False)
        if moving:
            text = await start_move(self, meeting, is_owner, platform, user_id)
            return PressResult("New times offered ✓", True, edit_text=text)
        try:
            text = await self.cancel(meeting, is_owner)
        except CalendarUnavailable:
            return PressResult("The calendar cannot be reached just now; please try again "
                               "in a moment.", False)
        return PressResult("Cancelled ✓", True, edit_text=text)

    async def cancel(self, meeting: Meeting, by_owner: bool, moved: bool = False) -> str:
        """Delete the event (if a calendar holds it), record the cancel, tell the other side."""
        writer = self.desk.writer
        if writer is not None and meeting.uid:
            await writer.cancel(meeting.uid)  # False: gone already (a second try)
        self.store.set_status(meeting.id, "cancelled", note="cancelled by "
                              + ("the owner" if by_owner else "the guest"),
                              only_from=("booked",))
        what, theirs = self.when_of(meeting, True), self.when_of(meeting, False)
        by_hand = "" if writer is not None else " Please remove it from your calendar by hand."
        care = self.desk.aftercare
        withdrawn = None  # the guest's calendar gets METHOD:CANCEL for the same UID
        if care is not None and meeting.uid:
            care.forget(meeting.uid)
            withdrawn = care.invitation(meeting, meeting.uid, CANCEL_METHOD)
        if by_owner and meeting.guest != "owner":
            await self.outbox.deliver(meeting.platform, meeting.chat_id,
                                      f"meeting-cancelled:{meeting.id}",
                                      f"The owner cancelled the meeting on {theirs}. Sorry! "
                                      "Ask for a new time with /meet.", file=withdrawn)
        else:
            if withdrawn is not None and meeting.guest != "owner" and not moved:
                await self.outbox.deliver(meeting.platform, meeting.chat_id,
                                          f"meeting-cancelled-ics:{meeting.id}",
                                          f"Cancelled: {what}. The attached file removes it "
                                          "from your calendar.", file=withdrawn)
            name = shown(one_line(meeting.guest_name, 64), "markdown")
            why = " to move it: new times are offered" if moved else ""
            await self.desk.tell_owner(meeting.platform, f"meeting-cancelled:{meeting.id}",
                                       f"{name} cancelled the meeting on {what}{why}."
                                       f"{by_hand}")
        return f"Cancelled: {what if by_owner else theirs}."

    def when_of(self, meeting: Meeting, for_owner: bool = True) -> str:
        """The owner's zone first for the owner, the guest's first for the guest."""
        if meeting.slot is None:
            return "(no time)"
        view = self.desk.owner_when if for_owner else self.desk.guest_when
        return view(meeting)


def meeting_json(meetings: list[Meeting]) -> list[dict[str, Any]]:
    """``frontdesk meetings --json``."""
    return [meeting.to_json() for meeting in meetings]
