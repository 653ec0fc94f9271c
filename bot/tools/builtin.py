"""The assistant's tools — remember, search_notes, agenda, notify_owner — bound
to services.

Each tool acts only within the caller's scope: notes are read and written under the caller's
own scope (the owner's are "owner"), and anyone but the owner sees the calendar as free/busy
only. ``notify_owner`` is the one tool that reaches someone else, and it only reaches the owner.
``set_reminder`` lives with the reminders (``bot.reminders.tool``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.calendar.agenda import read_agenda
from bot.calendar.events import EventSource
from bot.calendar.ics import CalendarError
from bot.tools.registry import Caller, ToolRegistry
from memory.notes import Memory, NoteTooLarge

# (who wrote, what they wrote) -> a short confirmation for the sender
OwnerNotifier = Callable[[Caller, str], Awaitable[str]]


def search_notes_tool(memory: Memory) -> Callable[[str, Caller], str]:
    """The memory search tool, always within the caller's own scope."""

    def search_notes(query: str, caller: Caller) -> str:
        """Search saved notes and return the best matches.

        Args:
            query: words to look for.
        """
        hits = memory.search(caller.scope, query, 5)
        if not hits:
            return "No matching notes."
        return "\n".join(f"#{hit.id}: {hit.text}" for hit in hits)

    return search_notes


def count_words(text: str) -> str:
    """Count the words of a text (for keeping a draft within its limit).

    Args:
        text: the text to count.
    """
    return f"{len(text.split())} words"


def build_tools(memory: Memory, calendar: EventSource | None,
                notify: OwnerNotifier) -> ToolRegistry:
    """A registry with the four assistant tools bound to these services."""
    registry = ToolRegistry()

    def remember(text: str, caller: Caller) -> str:
        """Save a note to memory for later.

        Args:
            text: the note to save, in plain words.
        """
        try:
            note_id = memory.add(caller.scope, text, caller.effect_key)  # once per call
        except NoteTooLarge as exc:
            return str(exc)
        return f"Saved note #{note_id}."

    def agenda(hours: float, caller: Caller) -> str:
        """Read the owner's calendar for the next hours (today's events for 0).

        Args:
            hours: how many hours ahead to look; 0 means today.
        """
        if calendar is None:
            return "No calendar is configured."
        try:
            return read_agenda(calendar, hours, caller.is_owner)
        except CalendarError as exc:
            return f"The calendar could not be read: {exc}"

    async def notify_owner(message: str, caller: Caller) -> str:
        """Pass an urgent message on to the owner right away.

        Args:
            message: what the owner needs to know, in one or two sentences.
        """
        return await notify(caller, message)

    registry.register(remember)
    registry.register(search_notes_tool(memory))
    registry.register(agenda)
    registry.register(notify_owner)
    return registry


def build_writing_tools(memory: Memory) -> ToolRegistry:
    """The draft agent's tools: look things up, count words."""
    registry = ToolRegistry()
    registry.register(search_notes_tool(memory))
    registry.register(count_words)
    return registry


def build_fact_tools(memory: Memory) -> ToolRegistry:
    """The fact checker's tools: the memory search only."""
    registry = ToolRegistry()
    registry.register(search_notes_tool(memory))
    return registry
