"""A minimal discord.py bot run as a subprocess by the tests: replies "echo: <text>" to DMs.

It reads DISCORD_BOT_TOKEN and DISCORD_BASE_URL the way ``frontdesk run`` will, so it shows
the fake works for a bot in another process (the fake then runs in a thread of the test).
"""

from __future__ import annotations

import os

import discord

from bot.adapters.discord.base_url import point_discord_at


class EchoBot(discord.Client):
    async def on_message(self, message: discord.Message) -> None:
        if self.user is not None and message.author.id != self.user.id:
            await message.channel.send(f"echo: {message.content}")


def main() -> None:
    point_discord_at(os.environ.get("DISCORD_BASE_URL"))
    intents = discord.Intents.default()
    intents.message_content = True
    EchoBot(intents=intents).run(os.environ["DISCORD_BOT_TOKEN"], log_handler=None)


if __name__ == "__main__":
    main()
