"""What happens to a message is an ordered list of handlers: the first that takes a turn
answers it, and a new way in is a new handler in the list."""

from __future__ import annotations

from bot.chat.guest_limits import GuestLimits
from bot.chat.handlers import (
    ChatCommands,
    MeetingsListing,
    NewRun,
    Turn,
    TypedPicks,
    WaitAnswers,
    WorkflowCommands,
)
from bot.chat.timezones import TimeZones
from bot.messages import Reply
from tests.support.harness import Harness


def test_the_handlers_are_asked_in_their_documented_order(harness: Harness) -> None:
    answerer = harness.services.chat.answerer
    assert [type(gate) for gate in answerer.gates] == [GuestLimits]  # before files are read
    kinds = [type(handler) for handler in answerer.handlers]
    assert kinds == [WorkflowCommands, MeetingsListing, TimeZones, ChatCommands, TypedPicks,
                     WaitAnswers, NewRun]


class Echo:
    """A new way in: messages starting with 'echo ' are answered by it, nothing else."""

    def __init__(self) -> None:
        self.taken: list[str] = []

    async def answer(self, turn: Turn) -> Reply | None:
        if not turn.message.text.startswith("echo "):
            return None
        self.taken.append(turn.message.text)
        return Reply(turn.message.text.removeprefix("echo "), "echo")


async def test_a_new_handler_takes_its_messages_and_passes_on_the_rest(harness: Harness) -> None:
    echo = Echo()
    harness.services.chat.answerer.handlers.insert(0, echo)
    reply = await harness.send("echo hello there")
    assert (reply.text, reply.route) == ("hello there", "echo")
    assert harness.small.history == [] and harness.big.history == []  # no run, no model
    other = await harness.send("/help")
    assert other.route == "command" and echo.taken == ["echo hello there"]
