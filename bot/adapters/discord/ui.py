"""Discord interactions for Frontdesk: approval buttons that survive restarts, slash commands.

An approval is a message whose buttons each carry one of the gateway's opaque tokens in their
``custom_id`` (``fd:<token>``). The buttons are a ``DynamicItem`` registered with the client at
start-up, so a press is understood from its ``custom_id`` alone: no view has to be remembered,
and a press on a message sent before a restart works like any other. A press is acknowledged
first (Discord allows 3 seconds; the decision may run a workflow), then the gateway decides,
then the message is edited to show the decision without buttons and the presser gets a short
private note. Slash commands are acknowledged by echoing the command as a visible message and
then go through the gateway like a typed message, so their answer leaves through the outbox.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord
from discord import app_commands

from bot.adapters.discord.format import DISCORD_MESSAGE_LIMIT
from bot.messages import Button, MenuCommand, PressResult

log = logging.getLogger(__name__)

CUSTOM_ID_PREFIX = "fd:"
TOKEN_PATTERN = r"[A-Za-z0-9_.-]{1,64}"  # a token: its kind, a dot, 22 random characters
MAX_BUTTONS = 25  # five rows of five

# (user id, token, the interaction's id: never repeated, so a second press is one) -> result
PressFn = Callable[[str, str, str], Awaitable[PressResult]]
CommandFn = Callable[[discord.Interaction[Any], str], Awaitable[None]]  # (interaction, text)


class ApprovalButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
                     template=CUSTOM_ID_PREFIX + r"(?P<token>" + TOKEN_PATTERN + r")"):
    """One answer of a waiting run; its ``custom_id`` is all it needs to be understood."""

    def __init__(self, token: str, label: str = "?") -> None:
        super().__init__(discord.ui.Button(label=label[:80], custom_id=CUSTOM_ID_PREFIX + token,
                                           style=button_style(label)))
        self.token = token

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any],
                             item: discord.ui.Item[Any], match: re.Match[str], /,
                             ) -> ApprovalButton:
        label = getattr(item, "label", None) or "?"
        return cls(match["token"], label)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        press: PressFn | None = getattr(interaction.client, "press_button", None)
        if press is None:  # not our client: nothing can decide
            return
        await answer_press(interaction, self.token, press)


def button_style(label: str) -> discord.ButtonStyle:
    """Green for a yes, red for a no, grey for anything else."""
    word = label.strip().lower()
    if word in {"approve", "yes", "ok", "publish", "send"}:
        return discord.ButtonStyle.success
    if word in {"discard", "reject", "no", "cancel", "delete"}:
        return discord.ButtonStyle.danger
    return discord.ButtonStyle.secondary


def approval_view(buttons: list[Button]) -> discord.ui.View:
    """A view with no time-out whose buttons carry the gateway's tokens."""
    view = discord.ui.View(timeout=None)
    for button in buttons[:MAX_BUTTONS]:
        view.add_item(ApprovalButton(button.token, button.label))
    return view


async def answer_press(interaction: discord.Interaction[Any], token: str,
                       press: PressFn) -> None:
    """Acknowledge at once, let the gateway decide, then show the outcome."""
    await interaction.response.defer()  # a silent acknowledgement; the work may be slow
    try:
        result = await press(str(interaction.user.id), token, str(interaction.id))
    except Exception:
        log.exception("a button press failed")
        result = PressResult("Sorry, that did not work; please try again.", False)
    if result.accepted and result.edit_text is not None:
        original = interaction.message.content if interaction.message is not None else ""
        try:
            await interaction.edit_original_response(
                content=decided_text(original, result.edit_text), view=None)
        except discord.HTTPException as exc:
            log.warning("could not edit the approval message: %s", exc)
    try:
        await interaction.followup.send(result.alert, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("could not answer a button press: %s", exc)


def decided_text(original: str, decision: str) -> str:
    """The question as it was, with the decision under it, within Discord's limit."""
    tail = f"\n\n**{decision}**"
    room = DISCORD_MESSAGE_LIMIT - len(tail)
    body = original if len(original) <= room else original[: room - 1] + "…"
    return (body + tail).strip()


def add_slash_commands(tree: app_commands.CommandTree[Any], menu: Sequence[MenuCommand],
                       run: CommandFn) -> None:
    """Every chat command of the menu as a slash command that calls ``run``."""
    for entry in menu:
        tree.add_command(app_commands.Command(name=entry.name,
                                              description=entry.description[:100],
                                              callback=_callback(entry, run)))


def _callback(entry: MenuCommand, run: CommandFn) -> Any:
    name = entry.name
    if entry.takes_text:
        @app_commands.describe(text="what the command works on")
        async def with_text(interaction: discord.Interaction[Any], text: str) -> None:
            await run(interaction, f"/{name} {text}")
        return with_text

    async def plain(interaction: discord.Interaction[Any]) -> None:
        await run(interaction, f"/{name}")
    return plain
