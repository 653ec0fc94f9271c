"""The set_reminder tool: a reminder in the caller's own chat and scope, from the model's words.

Prompt tasks (the text carried out as a request each time) are the owner's only. The
reminder is set in a worker thread: its rule's first occurrence is searched there, a search
bounded by construction (``bot.calendar.rules``), so no rule holds the chats meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, tzinfo

from bot.models.reminder_phrases import WhenUnclear, local_label, resolve_when
from bot.reminders.store import ReminderError, Reminders
from bot.tools.registry import Caller


def reminder_tool(reminders: Reminders, zone: Callable[[], tzinfo]
                  ) -> Callable[..., Awaitable[str]]:
    """The set_reminder tool: in the caller's chat and scope; prompt tasks for the owner only."""

    async def set_reminder(when: str, text: str, caller: Caller, rrule: str | None = None,
                           run_prompt: bool = False) -> str:
        """Set a reminder in this chat, or with rrule a recurring one.

        Args:
            when: ISO 8601 in the owner's zone, e.g. 2025-12-01T17:00 (the first one if it repeats).
            text: what to remind of, e.g. "call Ann".
            rrule: optional iCalendar RRULE to repeat it, e.g. FREQ=WEEKLY;BYDAY=MO.
            run_prompt: owner only: each time, carry the text out as a request instead.
        """
        owner_zone = zone()
        try:
            now = datetime.fromtimestamp(reminders.clock(), owner_zone)
            moment = resolve_when(when, owner_zone, now, recurring=bool(rrule))
            reminder = await asyncio.to_thread(
                reminders.add, caller.scope, caller.platform, caller.chat_id, text, moment,
                zone=owner_zone,
                rrule=rrule, kind="prompt" if run_prompt and caller.is_owner else "text",
                source=f"tool:{caller.effect_key}" if caller.effect_key else None)
        except (WhenUnclear, ReminderError) as unclear:
            return str(unclear)
        what = "I'll do this" if reminder.kind == "prompt" else "I'll remind you"
        repeats = f", then again by the rule {reminder.rrule}" if reminder.rrule else ""
        return (f"{what} on {local_label(reminder.due)}{repeats}: {reminder.text} "
                f"(reminder {reminder.id}).")

    return set_reminder
