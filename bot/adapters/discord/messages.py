"""Which Discord messages are for the bot, and each one as a platform-neutral message.

The bot answers direct messages, and on servers only messages that mention it (or its managed
role, which Discord's autocomplete offers under the same name) or reply to one of its
messages; never a bot's. What it takes in is an ``IncomingMessage`` with the bot's mention
taken out of the text; a slash command is one too, as if typed.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.adapters.discord import files as discord_files
from bot.messages import IncomingMessage

PLATFORM = "discord"


def addressed_to_me(message: discord.Message, me: discord.ClientUser | None) -> bool:
    """A DM, or a server message that mentions the bot (or its managed role, which
    Discord's autocomplete offers under the same name) or replies to it; never a bot's."""
    if me is None or message.author.bot or message.author.id == me.id:
        return False
    if message.guild is None:
        return True
    if any(user.id == me.id for user in message.mentions):
        return True
    my_role = message.guild.self_role
    if my_role is not None and my_role.id in message.raw_role_mentions:
        return True
    replied = message.reference.resolved if message.reference else None
    return isinstance(replied, discord.Message) and replied.author.id == me.id


def incoming(message: discord.Message, me: discord.ClientUser | None) -> IncomingMessage:
    """The platform-neutral message, with the bot's mention taken out of the text."""
    text = message.content
    if me is not None:
        my_role = message.guild.self_role if message.guild else None
        mine = [f"<@{me.id}>", f"<@!{me.id}>"]
        for mention in mine + ([f"<@&{my_role.id}>"] if my_role else []):
            text = text.replace(mention, " ")
    return IncomingMessage(platform=PLATFORM, chat_id=str(message.channel.id),
                           message_id=str(message.id), user_id=str(message.author.id),
                           text=" ".join(text.split()),
                           user_name=message.author.display_name,
                           is_private=message.guild is None,
                           attachments=discord_files.attachments_of(message),
                           user_handle=message.author.name)


def slash_message(interaction: discord.Interaction[Any], channel_id: int,
                  text: str) -> IncomingMessage:
    """A slash command as the message it stands for, as if typed in its channel."""
    return IncomingMessage(platform=PLATFORM, chat_id=str(channel_id),
                           message_id=f"i{interaction.id}", user_id=str(interaction.user.id),
                           text=text, user_name=interaction.user.display_name,
                           is_private=interaction.guild_id is None)
