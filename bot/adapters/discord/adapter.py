"""The Discord adapter: discord.py 2.x between Discord and the desk's inbound port.

It answers direct messages, and on servers only messages that mention the bot or reply to
one of its messages (``messages``). Every message goes to the inbound port it was handed
(``bot.messages.Inbound``: ``accept``, whose inbox makes a re-delivery after a reconnect or a
resume a no-op, then ``process``) with a typing indicator while it works; replies leave
through the outbox, one Discord message per part (``sending``
retries what discord.py gave up on). Discord does not re-deliver what was sent while the bot
was down, so at start (and after any fresh session) each channel the bot has seen is read
back from its cursor (``readback``), and whatever is new is answered once. Approvals and
slash commands are in ``ui``. Live replies (``bot.delivery.live``) grow one message by edits;
"typing…" stops at a reply.

Usage::

    await run_discord(desk, cursors, settings, menu)  # ``frontdesk run`` with a token set
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Awaitable, Sequence
from typing import Any

import discord
from discord import app_commands

from bot.adapters.base import Adapter, AdapterCursors
from bot.adapters.discord import files as discord_files
from bot.adapters.discord.base_url import point_discord_at
from bot.adapters.discord.format import split_reply
from bot.adapters.discord.messages import PLATFORM, addressed_to_me, incoming, slash_message
from bot.adapters.discord.pacing import TYPING_EVERY_S, typing_once
from bot.adapters.discord.pacing import DiscordTuning as DiscordTuning  # its home till now
from bot.adapters.discord.readback import ReadBack
from bot.adapters.discord.sending import messageable, with_retries
from bot.adapters.discord.ui import ApprovalButton, add_slash_commands, approval_view
from bot.adapters.typing_indicator import Typing
from bot.config.banner import adapter_line, announce
from bot.config.settings import Settings
from bot.messages import (
    Attachment,
    Button,
    Inbound,
    LiveRefused,
    MenuCommand,
    OutgoingFile,
    PressResult,
    Undeliverable,
)

log = logging.getLogger(__name__)

LIVE_LIMIT = 1990  # characters of a partial text (Discord's 2,000, less room for the mark)
NO_CONTENT_INTENT = (
    "Discord refused the connection: the bot's Message Content Intent is off. Turn it on in "
    "the Developer Portal (your application → Bot → Privileged Gateway Intents → Message "
    "Content Intent), save, and start Frontdesk again.")
BAD_TOKEN = ("Discord refused DISCORD_BOT_TOKEN. Copy the bot's token again from the "
             "Developer Portal (your application → Bot → Reset Token) into .env.")


def intents() -> discord.Intents:
    """Guilds, guild and direct messages, and message content (a privileged intent)."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = True
    return wanted


class DiscordAdapter(discord.Client):
    """A discord.py client that is also the gateway's ``Adapter`` for Discord."""

    platform = PLATFORM
    live_limit = LIVE_LIMIT
    caption_limit = 2000  # a message's text, with or without a file

    def __init__(self, desk: Inbound[Adapter], cursors: AdapterCursors, settings: Settings,
                 tuning: DiscordTuning | None = None, *,
                 menu: Sequence[MenuCommand] = ()) -> None:
        self.tuning = tuning or DiscordTuning()
        super().__init__(intents=intents(), guild_ready_timeout=self.tuning.ready_timeout,
                         allowed_mentions=discord.AllowedMentions.none())
        self.desk = desk  # the inbound port messages and presses go to
        self.read_back = ReadBack(cursors)  # each channel's last message taken
        self.menu = list(menu)  # the chat commands, as slash commands
        self.owner_id = settings.discord_owner_id
        self.allowed_ids = settings.discord_allowed_users  # for the start-up banner
        self.tree: app_commands.CommandTree[DiscordAdapter] = app_commands.CommandTree(self)
        self.serving = asyncio.Event()  # set once attached to the gateway
        self._owner_dm: str | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.typing_shown = Typing(TYPING_EVERY_S)

    # -- discord.py hooks ------------------------------------------------------------------
    async def setup_hook(self) -> None:
        """Before connecting: buttons from any earlier run, the slash commands."""
        self.add_dynamic_items(ApprovalButton)
        add_slash_commands(self.tree, self.menu, self.run_slash_command)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        if not initial:
            await asyncio.sleep(self.tuning.identify_delay)

    async def on_connect(self) -> None:
        """A new session (READY, before its messages): every channel is read back anew."""
        self.read_back.new_session()

    async def on_ready(self) -> None:
        """After READY (a new session, not a resume): attach once, then catch up."""
        first = not self.serving.is_set()
        self._spawn(self._start_serving(first))

    async def on_message(self, message: discord.Message) -> None:
        await self.serving.wait()
        await self.take(message)

    # -- the gateway's Adapter -------------------------------------------------------------
    def split(self, text: str) -> list[str]:
        """At most 2,000 characters a part, numbered, code blocks balanced."""
        return split_reply(text)

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Post one part (with the approval buttons, if any); retry what discord.py gave up.
        The part's ``key`` is an enforced nonce: Discord answers a repeat (a retry, a re-send
        after a crash) with the message it already made."""
        return await self.send_file(chat_id, None, text, buttons, key=key)

    async def send_file(self, chat_id: str, file: OutgoingFile | None, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        """Post a part whose file is the message's attachment (None: text only), as ``send``."""
        channel = await messageable(self, chat_id)
        self.stop_typing(chat_id)  # a reply is going out: no more "typing…" here
        extra: dict[str, Any] = {"view": approval_view(buttons)} if buttons else {}
        nonce: str | int = key[:25] if key else secrets.randbits(64)  # randbits: as discord.py

        async def post() -> discord.Message:
            if file is not None:  # a fresh File each try: a try reads it to the end
                extra["file"] = discord_files.upload(file)
            return await channel.send(caption or None, nonce=nonce, **extra)

        try:
            message = await with_retries(post, self.tuning)
        except discord.HTTPException as refused:
            if refused.status < 500 and refused.status != 429:  # 403, 404, 400: for good
                raise Undeliverable(f"Discord: {refused.status} {refused.text}") from refused
            raise
        return str(message.id)  # the outbox marks it sent at once

    # -- live replies (bot.delivery.live) -----------------------------------------------------
    def live_mode(self, chat_id: str, private: bool) -> str | None:
        """Discord has no drafts: a message that grows, in DMs and on servers alike."""
        return "edit"

    async def draft(self, chat_id: str, draft_id: int, text: str) -> None:
        """Not offered on Discord (the live reply edits instead)."""
        raise LiveRefused("Discord has no drafts")

    async def post(self, chat_id: str, text: str) -> str:
        """A partial text as a new message; its id (discord.py waits out rate limits)."""
        channel = await messageable(self, chat_id)
        self.stop_typing(chat_id)
        message = await channel.send(text)
        return str(message.id)

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        """Replace a message's text (``final``: an outbox part, with its buttons, retried);
        a message that is gone is ``LiveRefused``."""
        channel = await messageable(self, chat_id)
        if not hasattr(channel, "get_partial_message"):
            raise LiveRefused("this channel's messages cannot be edited here")
        message = channel.get_partial_message(int(message_id))
        if final:
            self.stop_typing(chat_id)
        view = approval_view(buttons) if buttons else None
        try:
            if not final:
                await message.edit(content=text)
            else:
                await with_retries(lambda: message.edit(content=text, view=view),
                                   self.tuning)
        except discord.NotFound as gone:
            raise LiveRefused("the message is gone") from gone
        except discord.Forbidden as refused:
            raise Undeliverable(f"Discord: {refused.status} {refused.text}") from refused

    async def delete(self, chat_id: str, message_id: str) -> None:
        """Remove a live message the final text did not need."""
        channel = await messageable(self, chat_id)
        if hasattr(channel, "get_partial_message"):
            with contextlib.suppress(discord.NotFound):
                await with_retries(
                    lambda: channel.get_partial_message(int(message_id)).delete(), self.tuning)

    def stop_typing(self, chat_id: str) -> None:
        """A reply goes out in this channel: its "typing…" stops."""
        self.typing_shown.stop(chat_id)

    async def owner_chat(self) -> str | None:
        """The DM channel with ``DISCORD_OWNER_ID`` (opened on first use)."""
        if self._owner_dm is None and self.owner_id and self.owner_id.isdigit():
            channel = await with_retries(
                lambda: self.create_dm(discord.Object(int(self.owner_id or 0))), self.tuning)
            self._owner_dm = str(channel.id)
        return self._owner_dm

    # -- messages --------------------------------------------------------------------------
    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """A message's file, streamed and stopped past ``max_bytes`` (``bot.media.attachments``
        calls this)."""
        return await with_retries(
            lambda: discord_files.fetch(self._connection, attachment, max_bytes), self.tuning)

    async def take(self, message: discord.Message, *, reading_back: bool = False) -> None:
        """Answer one message if it is for us (once, whatever delivers it).

        The cursor moves past it once it is in the inbox (``accept``), before the answer, and
        only when everything before it in its channel has been taken: while reading back, or
        live in a channel already read back in this session.
        """
        accepted = None
        if addressed_to_me(message, self.user):
            msg = incoming(message, self.user)
            if msg.text or msg.attachments:
                accepted = self.desk.accept(msg)  # None: a re-delivery, answered already
        self.read_back.passed(message.channel.id, message.id, reading_back=reading_back)
        if accepted is not None:
            async with self.typing_shown.showing(str(message.channel.id),
                                                 lambda: typing_once(message.channel)):
                try:
                    # read back one by one: waiting for more lines would only add time
                    await self.desk.process(accepted, gather=not reading_back)
                except Exception:  # the inbox keeps it: answered at the next start
                    log.exception("handling Discord message %s failed", message.id)

    async def _start_serving(self, first: bool) -> None:
        try:
            if first:
                if self.user is not None:
                    announce(adapter_line("Discord", str(self.user), str(self.user.id),
                                          self.owner_id, self.allowed_ids))
                await self.desk.attach(self, background=True)
                self.serving.set()
                self._spawn(self._sync_commands())
            count = await self.read_back.catch_up(
                self.fetch_channel, lambda message: self.take(message, reading_back=True))
            if count:
                log.info("caught up on %d Discord message(s) sent while away", count)
        except Exception:
            log.exception("starting the Discord adapter failed")
            self.serving.set()  # live messages still get answered

    # -- buttons and slash commands --------------------------------------------------------
    async def press_button(self, user_id: str, token: str, press_id: str) -> PressResult:
        """A press, as ``bot.adapters.discord.ui`` reports it: the gateway decides."""
        await self.serving.wait()
        return await self.desk.press(PLATFORM, user_id, token, press_id)

    async def run_slash_command(self, interaction: discord.Interaction[Any], text: str) -> None:
        """Acknowledge by showing the command, then treat it as a typed message."""
        await interaction.response.send_message(text[:2000])
        if interaction.channel_id is None:
            return
        msg = slash_message(interaction, interaction.channel_id, text)
        await self.serving.wait()
        accepted = self.desk.accept(msg)
        if accepted is not None:
            await self.desk.process(accepted, gather=False)

    async def _sync_commands(self) -> None:
        try:
            await self.tree.sync()
        except discord.HTTPException as exc:
            log.warning("could not register the slash commands: %s", exc.status)

    # -- plumbing --------------------------------------------------------------------------
    def _spawn(self, job: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


async def run_discord(desk: Inbound[Adapter], cursors: AdapterCursors, settings: Settings,
                      menu: Sequence[MenuCommand] = (), *,
                      tuning: DiscordTuning | None = None) -> None:
    """Connect and serve until cancelled; a setup mistake stops the program with a clear
    message (``SystemExit``), never a stack trace."""
    if not settings.discord_bot_token:
        raise SystemExit("DISCORD_BOT_TOKEN is not set.")
    point_discord_at(settings.discord_base_url)
    client = DiscordAdapter(desk, cursors, settings,
                            tuning or DiscordTuning.from_env(os.environ), menu=menu)
    try:
        async with client:
            await client.start(settings.discord_bot_token)
    except discord.PrivilegedIntentsRequired:
        raise SystemExit(f"frontdesk: {NO_CONTENT_INTENT}") from None
    except discord.LoginFailure:
        raise SystemExit(f"frontdesk: {BAD_TOKEN}") from None
