"""The chat commands that start a workflow (/draft, /brief, …), each declared once, here.

A declaration says the command's name, the workflow it starts, whether only the owner may use
it, what it takes after its name, how the run's input is built, and its line in the command
menus. The gateway reads it to check the owner and start the run; ``bot.chat.commands``
reads it for /help and for the menus Telegram and Discord register. Adding a workflow
command is one entry in ``WORKFLOW_COMMANDS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CommandRequest:
    """What a workflow command's input is built from."""

    argument: str  # the text after the command's name
    sender: dict[str, Any]  # the plain-dict sender the workflows see
    today: str  # ISO date in the owner's zone


InputFn = Callable[[CommandRequest], dict[str, Any]]


@dataclass(frozen=True)
class WorkflowCommand:
    """A chat command that starts a workflow run."""

    name: str  # typed as /name
    workflow: str  # the name of the workflow it starts
    description: str  # its line in the platforms' command menus
    input: InputFn  # the run's input
    owner_only: bool = True
    argument: str = ""  # what it takes after its name, as /help shows it ("" for nothing)
    missing_argument: str = ""  # the reply when the argument it needs is missing
    argument_required: bool = True  # False: the argument may be left out (/meet [TOPIC])

    @property
    def usage(self) -> str:
        """How /help writes it: ``/draft BRIEF``."""
        return f"/{self.name} {self.argument}" if self.argument else f"/{self.name}"


def briefing_input(day: str, platform: str, chat_id: str) -> dict[str, Any]:
    """The morning briefing's input: the day, the owner (in this chat) as sender."""
    return {"day": day, "sender": {"scope": "owner", "is_owner": True, "platform": platform,
                                   "chat_id": chat_id, "message_id": "", "name": "owner"}}


def draft_input(request: CommandRequest) -> dict[str, Any]:
    """/draft BRIEF: the content workflow drafts to the brief."""
    return {"brief": request.argument, "sender": request.sender}


def brief_input(request: CommandRequest) -> dict[str, Any]:
    """/brief: today's briefing in the chat it was asked in."""
    return briefing_input(request.today, str(request.sender["platform"]),
                          str(request.sender["chat_id"]))


def meet_input(request: CommandRequest) -> dict[str, Any]:
    """/meet [TOPIC]: the meeting workflow offers free times to whoever asked."""
    return {"topic": request.argument, "sender": request.sender}


WORKFLOW_COMMANDS: dict[str, WorkflowCommand] = {command.name: command for command in [
    WorkflowCommand(
        "draft", workflow="content", input=draft_input, argument="BRIEF",
        description="owner only: draft content for approval: /draft BRIEF",
        missing_argument=("Tell me what to write: /draft BRIEF, e.g. /draft a thank-you note "
                          "to Ann for the flowers, under 80 words.")),
    WorkflowCommand("brief", workflow="brief", input=brief_input,
                    description="owner only: your morning briefing"),
    WorkflowCommand("meet", workflow="meeting", input=meet_input, argument="[TOPIC]",
                    owner_only=False, argument_required=False,
                    description="ask for a meeting with the owner: /meet [topic]"),
]}
