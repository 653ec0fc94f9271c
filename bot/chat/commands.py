"""The chat commands every adapter shares (/start, /help, /notes, /forget, /cancel, /reminders,
the owner's /model of ``bot.chat.model_command``, and the workflow commands of
``bot.chat.workflow_commands``: /draft, /brief).

The gateway calls ``parse`` on each message and, for a command, ``CommandHandler.handle``;
adapters only register the list in ``COMMANDS`` with their platform's command menu.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.chat import model_command
from bot.chat.decisions import NOT_OWNER
from bot.chat.model_command import ModelCommand
from bot.chat.workflow_commands import WORKFLOW_COMMANDS
from bot.config.text import chat_place, one_line, shown
from bot.messages import MenuCommand
from bot.reminders.store import Reminders
from memory.notes import Memory

# (name, menu description, what it takes after its name) of the commands without a workflow.
PLAIN_COMMANDS: list[tuple[str, str, str]] = [
    ("help", "what I can do", ""),
    ("notes", "your recent notes", ""),
    ("forget", "delete a note: /forget ID", "ID"),
    ("cancel", "cancel this chat's waiting run", ""),
    ("reminders", "this chat's reminders; /reminders cancel ID", ""),
    ("meetings", "your upcoming meetings, each with a Cancel button", ""),
    ("timezone", "your time zone for meeting times: /timezone ZONE", "[ZONE]"),
]

COMMANDS: list[tuple[str, str]] = [
    *[(name, description) for name, description, _ in PLAIN_COMMANDS],
    (model_command.NAME, model_command.MENU_LINE),
    *[(command.name, command.description) for command in WORKFLOW_COMMANDS.values()],
]
# The commands a platform's menu asks a text for (Discord's slash command option).
LINE_CHARS = 80  # a note or reminder in a list: one short line
COMMANDS_WITH_ARGUMENT = frozenset(
    [name for name, _, argument in PLAIN_COMMANDS if argument]
    + [command.name for command in WORKFLOW_COMMANDS.values() if command.argument])


def menu() -> list[MenuCommand]:
    """Every chat command as the platforms' menus list it."""
    return [MenuCommand(name, description, name in COMMANDS_WITH_ARGUMENT)
            for name, description in COMMANDS]


def and_list(items: list[str]) -> str:
    """``a, b and c``."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def commands_line() -> str:
    """The /help line listing every command, the owner's own last."""
    everyone = [f"/{name} {argument}".strip() for name, _, argument in PLAIN_COMMANDS]
    everyone += [c.usage for c in WORKFLOW_COMMANDS.values() if not c.owner_only]
    owner = [model_command.USAGE, *[c.usage for c in WORKFLOW_COMMANDS.values() if c.owner_only]]
    listed = ", ".join(everyone)
    if owner:
        listed += f", {and_list(owner)} (owner only)"
    return f"Commands: {listed}."


HELP_TEXT = """I'm Frontdesk, a front-desk assistant. Write to me in plain words:
- "remember that …" saves a note; ask me about it later;
- "remind me at 17:00 to …" or "every Monday at 9 remind me to …" sets a reminder;
- ask about today's agenda or your schedule;
- "can we meet next week?" (or /meet) offers free times with the owner;
- anything urgent is passed on to the owner at once.
""" + commands_line()

START_TEXT = "Hello! " + HELP_TEXT


@dataclass(frozen=True)
class Command:
    """A parsed chat command: its name (lower case, no slash) and the rest of the text."""

    name: str
    argument: str


def parse(text: str) -> Command | None:
    """Read ``/name[@bot] argument``; None when the text is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2:
        return None
    head, rest = stripped[1:].partition(" ")[::2]
    name = head.split("@", 1)[0].lower()
    if not name.isascii() or not name.replace("_", "").isalnum():
        return None
    return Command(name=name, argument=rest.strip())


CancelFn = Callable[[], Awaitable[str]]


class CommandHandler:
    """Answers the commands that need no workflow: help, notes, forget, cancel."""

    def __init__(self, memory: Memory, reminders: Reminders | None = None,
                 models: ModelCommand | None = None) -> None:
        self.memory = memory
        self.reminders = reminders
        self.models = models  # /model

    async def handle(self, command: Command, scope: str, cancel: CancelFn, *,
                     where: tuple[str, str] = ("", ""), is_owner: bool = False) -> str | None:
        """The reply to a command, or None when the gateway must handle it (a workflow).

        ``where``: the (platform, chat) it was sent in; ``is_owner``: sent by the bot's owner.
        """
        if command.name == "start":
            return START_TEXT
        if command.name == "help":
            return HELP_TEXT
        if command.name == "notes":
            return self._notes(scope, where[0])
        if command.name == "forget":
            return self._forget(scope, command.argument)
        if command.name == "cancel":
            return await cancel()
        if command.name == "reminders" and self.reminders is not None:
            return reminders_reply(self.reminders, command.argument, scope, where, is_owner)
        if command.name == model_command.NAME and self.models is not None:
            return self.models.reply(command.argument, where) if is_owner else NOT_OWNER
        if command.name in WORKFLOW_COMMANDS:
            return None
        return f"I don't know the command /{command.name[:32]}. Try /help."

    def _notes(self, scope: str, platform: str) -> str:
        notes = self.memory.recent(scope, 10)
        if not notes:
            return "You have no notes yet. Say \"remember that …\" to save one."
        lines = [f"#{note.id} {listed(note.text, platform)}" for note in notes]
        return "Your recent notes:\n" + "\n".join(lines)

    def _forget(self, scope: str, argument: str) -> str:
        raw = argument.lstrip("#")
        if not raw.isdigit() or len(raw) > 18:
            return "Tell me which note: /forget ID (the number shown by /notes)."
        if self.memory.forget(scope, int(raw)):
            return f"Forgotten note #{raw}."
        return f"You have no note #{raw}."


def reminders_reply(reminders: Reminders, argument: str, scope: str, where: tuple[str, str],
                    is_owner: bool) -> str:
    """/reminders: this chat's pending ones, one a line; /reminders cancel ID."""
    action, raw = argument.partition(" ")[::2]
    if action.lower() == "cancel":
        raw = raw.strip().lstrip("#")
        if not raw.isdigit() or len(raw) > 18:
            return "Tell me which one: /reminders cancel ID (the number /reminders shows)."
        if reminders.cancel(int(raw), scope, is_owner):
            return f"Cancelled reminder {raw}."
        return f"You have no pending reminder {raw}."
    if action:
        return "Use /reminders to list this chat's reminders, /reminders cancel ID to cancel one."
    pending = reminders.pending(*where)
    if is_owner:  # and the bot's own for the owner's chat: calendar notices, the briefing
        pending = sorted([*pending, *(r for r in reminders.pending() if not r.chat_id)],
                         key=lambda r: (r.due_at, r.id))
    if not pending:
        return "No reminders are pending in this chat. Say \"remind me at 17:00 to …\" to set one."
    lines = [f"{r.id} {r.due:%a} {r.due.day} {r.due:%b} {r.due:%H:%M} "
             f"{listed(r.text, where[0])}" + (" (repeats)" if r.rrule else "")
             for r in pending]
    return "Pending reminders:\n" + "\n".join(lines)


def listed(text: str, platform: str) -> str:
    """A note's or a reminder's words on one line of a list, shown literally in that chat."""
    return shown(one_line(text, LINE_CHARS), chat_place(platform))
