"""The ``propose_meeting`` tool: the agent starts the meeting workflow from a person's words.

The tool does not pick times: it starts the workflow (``bot.chat.meetings`` passes in how),
whose offer reaches the chat as buttons; the rules are checked in code at Hold and at Book,
whatever the model sends here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.tools.registry import Caller

Propose = Callable[[Caller, str, int | None, str | None, str | None], Awaitable[str]]
Move = Callable[[Caller, str | None, str | None], Awaitable[str]]


def meeting_tool(propose: Propose) -> Callable[..., Awaitable[str]]:
    """The propose_meeting tool over the chat's ``propose``."""

    async def propose_meeting(topic: str, caller: Caller, minutes: int | None = None,
                              earliest: str | None = None, latest: str | None = None) -> str:
        """Offer the person free times to meet the owner (as buttons in this chat); the owner
        confirms the one they pick. Use it when someone asks to meet, book or schedule a call.

        Args:
            topic: what the meeting is about, in the person's own words.
            minutes: optional length in minutes (default: the owner's setting).
            earliest: optional ISO date or time in the owner's zone, e.g. 2025-12-02T09:00.
            latest: optional ISO date or time by which the meeting must end.
        """
        return await propose(caller, topic, minutes, earliest, latest)

    return propose_meeting


def move_tool(move: Move) -> Callable[..., Awaitable[str]]:
    """The move_meeting tool over the chat's ``move``."""

    async def move_meeting(caller: Caller, earliest: str | None = None,
                           latest: str | None = None) -> str:
        """Move the person's next booked meeting ("move it to Thursday"): it is cancelled and
        new free times are offered as buttons in this chat, in one step.

        Args:
            earliest: optional ISO date or time in the owner's zone the new time starts from.
            latest: optional ISO date or time by which the new meeting must end.
        """
        return await move(caller, earliest, latest)

    return move_meeting
