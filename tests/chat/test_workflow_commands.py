"""Workflow commands are declared once: the gateway's owner check and argument check, /help
and the platforms' menus all read the same declarations."""

from __future__ import annotations

from bot.chat.commands import (
    COMMANDS,
    COMMANDS_WITH_ARGUMENT,
    HELP_TEXT,
    Command,
    CommandHandler,
    parse,
)
from bot.chat.decisions import NOT_OWNER
from bot.chat.workflow_commands import WORKFLOW_COMMANDS
from tests.support.harness import GUEST, Harness


def test_the_menus_and_help_list_every_workflow_command() -> None:
    for command in WORKFLOW_COMMANDS.values():
        assert (command.name, command.description) in COMMANDS
        assert command.usage in HELP_TEXT
        assert (command.name in COMMANDS_WITH_ARGUMENT) == bool(command.argument)
    assert WORKFLOW_COMMANDS["draft"].usage == "/draft BRIEF"
    assert HELP_TEXT.endswith(
        "Commands: /help, /notes, /forget ID, /cancel, /reminders, /meetings, "
        "/timezone [ZONE], /meet [TOPIC], "
        "/model [NAME|reset], "
        "/draft BRIEF and /brief (owner only).")


async def test_a_guest_is_refused_every_owner_only_workflow_command(harness: Harness) -> None:
    for command in WORKFLOW_COMMANDS.values():
        if not command.owner_only:  # /meet: a guest's own request (tests/meetings)
            continue
        reply = await harness.send(f"/{command.name} something", GUEST)
        assert (reply.route, reply.text, reply.run_id) == ("command", NOT_OWNER, None)
    assert harness.services.flows.store.runs() == []


async def test_a_missing_argument_is_asked_for_without_a_run(harness: Harness) -> None:
    reply = await harness.send("/draft")
    assert (reply.route, reply.run_id) == ("command", None)
    assert reply.text == WORKFLOW_COMMANDS["draft"].missing_argument
    assert reply.text.startswith("Tell me what to write: /draft BRIEF, e.g.")
    assert harness.services.flows.store.runs() == [] and harness.big.history == []


async def test_the_command_handler_leaves_workflow_commands_to_the_gateway(
        harness: Harness) -> None:
    handler = CommandHandler(harness.services.memory)
    for name in WORKFLOW_COMMANDS:
        assert await handler.handle(parsed(name), "owner", no_cancel) is None


def parsed(name: str) -> Command:
    command = parse(f"/{name}")
    assert command is not None
    return command


async def no_cancel() -> str:
    raise AssertionError("not a /cancel")
