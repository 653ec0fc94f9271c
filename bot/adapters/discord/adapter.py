"""The Discord adapter: discord.py 2.x between Discord and the gateway.

It answers direct messages, and on servers only messages that mention the bot or reply to
one of its messages. Every message goes through ``Gateway.handle`` (whose inbox makes a
re-delivery after a reconnect or a resume a no-op) with a typing indicator while it works;
replies leave through the gateway's outbox, one Discord message per part. Discord does not
re-deliver what was sent while the bot was down, so at start (and after any fresh session)
each channel the bot has seen is read back from its cursor, and whatever is new is answered
once. A cursor passes a message only once it is in the inbox (or needs no answer), and a live
message moves it only in a channel already read back in this session, so a crash before the
read-back never skips what was sent earlier. Approvals and slash commands are in ``discord_ui``.
Live replies (``bot.delivery.live``) grow one message by edits; "typing…" stops at a reply.

Usage::

    await run_discord(desk, cursors, settings, menu)  # ``frontdesk run`` with a token set
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiohttp
import discord
from discord import app_commands

from bot.adapters.base import Adapter, AdapterCursors
from bot.adapters.discord import files as discord_files
from bot.adapters.discord.base_url import point_discord_at
from bot.adapters.discord.format import split_reply
from bot.adapters.discord.pacing import TYPING_EVERY_S, typing_once
from bot.adapters.discord.pacing import DiscordTuning as DiscordTuning  # its home till now
from bot.adapters.discord.ui import ApprovalButton, add_slash_commands, approval_view
from bot.adapters.typing_indicator import Typing
from bot.config.banner import adapter_line, announce
from bot.config.settings import Settings
from bot.messages import (
    Attachment,
    Button,
    Inbound,
    IncomingMessage,
    LiveRefused,
    MenuCommand,
    OutgoingFile,
    PressResult,
    Undeliverable,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

PLATFORM = "discord"
CURSOR_PREFIX = "discord:channel:"  # + channel id -> every message up to this id is taken
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
        self.cursors = cursors  # each channel's last message taken
        self.menu = list(menu)  # the chat commands, as slash commands
        self.owner_id = settings.discord_owner_id
        self.allowed_ids = settings.discord_allowed_users  # for the start-up banner
        self.tree: app_commands.CommandTree[DiscordAdapter] = app_commands.CommandTree(self)
        self.serving = asyncio.Event()  # set once attached to the gateway
        self._owner_dm: str | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._read_back: set[int] = set()  # channels read back since this session began
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
        self._read_back.clear()

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
        channel = await self._messageable(chat_id)
        self.stop_typing(chat_id)  # a reply is going out: no more "typing…" here
        extra: dict[str, Any] = {"view": approval_view(buttons)} if buttons else {}
        nonce: str | int = key[:25] if key else secrets.randbits(64)  # randbits: as discord.py

        async def post() -> discord.Message:
            if file is not None:  # a fresh File each try: a try reads it to the end
                extra["file"] = discord_files.upload(file)
            return await channel.send(caption or None, nonce=nonce, **extra)

        try:
            message = await self._with_retries(post)
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
        channel = await self._messageable(chat_id)
        self.stop_typing(chat_id)
        message = await channel.send(text)
        return str(message.id)

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        """Replace a message's text (``final``: an outbox part, with its buttons, retried);
        a message that is gone is ``LiveRefused``."""
        channel = await self._messageable(chat_id)
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
                await self._with_retries(lambda: message.edit(content=text, view=view))
        except discord.NotFound as gone:
            raise LiveRefused("the message is gone") from gone
        except discord.Forbidden as refused:
            raise Undeliverable(f"Discord: {refused.status} {refused.text}") from refused

    async def delete(self, chat_id: str, message_id: str) -> None:
        """Remove a live message the final text did not need."""
        channel = await self._messageable(chat_id)
        if hasattr(channel, "get_partial_message"):
            with contextlib.suppress(discord.NotFound):
                await self._with_retries(
                    lambda: channel.get_partial_message(int(message_id)).delete())

    def stop_typing(self, chat_id: str) -> None:
        """A reply goes out in this channel: its "typing…" stops."""
        self.typing_shown.stop(chat_id)

    async def owner_chat(self) -> str | None:
        """The DM channel with ``DISCORD_OWNER_ID`` (opened on first use)."""
        if self._owner_dm is None and self.owner_id and self.owner_id.isdigit():
            channel = await self._with_retries(
                lambda: self.create_dm(discord.Object(int(self.owner_id or 0))))
            self._owner_dm = str(channel.id)
        return self._owner_dm

    # -- messages --------------------------------------------------------------------------
    def addressed_to_me(self, message: discord.Message) -> bool:
        """A DM, or a server message that mentions the bot (or its managed role, which
        Discord's autocomplete offers under the same name) or replies to it; never a bot's."""
        me = self.user
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

    def incoming(self, message: discord.Message) -> IncomingMessage:
        """The platform-neutral message, with the bot's mention taken out of the text."""
        text = message.content
        if self.user is not None:
            my_role = message.guild.self_role if message.guild else None
            mine = [f"<@{self.user.id}>", f"<@!{self.user.id}>"]
            for mention in mine + ([f"<@&{my_role.id}>"] if my_role else []):
                text = text.replace(mention, " ")
        return IncomingMessage(platform=PLATFORM, chat_id=str(message.channel.id),
                               message_id=str(message.id), user_id=str(message.author.id),
                               text=" ".join(text.split()),
                               user_name=message.author.display_name,
                               is_private=message.guild is None,
                               attachments=discord_files.attachments_of(message),
                               user_handle=message.author.name)

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """A message's file, streamed and stopped past ``max_bytes`` (``bot.media.attachments``
        calls this)."""
        return await self._with_retries(
            lambda: discord_files.fetch(self._connection, attachment, max_bytes))

    async def take(self, message: discord.Message, *, reading_back: bool = False) -> None:
        """Answer one message if it is for us (once, whatever delivers it).

        The cursor moves past it once it is in the inbox (``accept``), before the answer, and
        only when everything before it in its channel has been taken: while reading back, or
        live in a channel already read back in this session.
        """
        accepted = None
        if self.addressed_to_me(message):
            msg = self.incoming(message)
            if msg.text or msg.attachments:
                accepted = self.desk.accept(msg)  # None: a re-delivery, answered already
        self.passed(message.channel.id, message.id, reading_back=reading_back)
        if accepted is not None:
            async with self.typing_shown.showing(str(message.channel.id),
                                                 lambda: typing_once(message.channel)):
                try:
                    # read back one by one: waiting for more lines would only add time
                    await self.desk.process(accepted, gather=not reading_back)
                except Exception:  # the inbox keeps it: answered at the next start
                    log.exception("handling Discord message %s failed", message.id)

    def passed(self, channel_id: int, message_id: int, *, reading_back: bool = False) -> None:
        """Move a channel's cursor past a taken message (never back: answers finish out of
        order); a live message in a channel not yet read back leaves it where it is."""
        name = CURSOR_PREFIX + str(channel_id)
        current = self.cursors.get(name)
        if current is None:  # a channel never seen: nothing before this message to read back
            self._read_back.add(channel_id)
        elif not reading_back and channel_id not in self._read_back:
            return
        if current is None or int(current) < message_id:
            self.cursors.set(name, str(message_id))

    async def catch_up(self) -> int:
        """Read every known channel from its cursor; answer what is new."""
        found = 0
        for name, last in self.cursors.with_prefix(CURSOR_PREFIX).items():
            channel_id = int(name.removeprefix(CURSOR_PREFIX))
            try:
                channel = await self.fetch_channel(channel_id)
                if not isinstance(channel, discord.abc.Messageable):
                    continue
                missed = [m async for m in channel.history(
                    after=discord.Object(int(last)), oldest_first=True, limit=None)]
                for message in missed:
                    found += 1
                    await self.take(message, reading_back=True)
            except discord.HTTPException as exc:
                log.warning("could not read Discord channel %s: %s", channel_id, exc.status)
                continue
            except Exception:  # this channel waits for the next session; the others go on
                log.exception("reading back Discord channel %s failed", channel_id)
                continue
            self._read_back.add(channel_id)
        return found

    async def _start_serving(self, first: bool) -> None:
        try:
            if first:
                if self.user is not None:
                    announce(adapter_line("Discord", str(self.user), str(self.user.id),
                                          self.owner_id, self.allowed_ids))
                await self.desk.attach(self, background=True)
                self.serving.set()
                self._spawn(self._sync_commands())
            count = await self.catch_up()
            if count:
                log.info("caught up on %d Discord message(s) sent while away", count)
        except Exception:
            log.exception("starting the Discord adapter failed")
            self.serving.set()  # live messages still get answered

    # -- buttons and slash commands --------------------------------------------------------
    async def press_button(self, user_id: str, token: str, press_id: str) -> PressResult:
        """A press, as ``discord_ui`` reports it: the gateway decides."""
        await self.serving.wait()
        return await self.desk.press(PLATFORM, user_id, token, press_id)

    async def run_slash_command(self, interaction: discord.Interaction[Any], text: str) -> None:
        """Acknowledge by showing the command, then treat it as a typed message."""
        await interaction.response.send_message(text[:2000])
        if interaction.channel_id is None:
            return
        msg = IncomingMessage(platform=PLATFORM, chat_id=str(interaction.channel_id),
                              message_id=f"i{interaction.id}", user_id=str(interaction.user.id),
                              text=text, user_name=interaction.user.display_name,
                              is_private=interaction.guild_id is None)
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
    async def _messageable(self, chat_id: str) -> discord.abc.Messageable:
        if chat_id.startswith("user:"):  # the notifier's fallback: a DM to that user
            return await self.create_dm(discord.Object(int(chat_id.removeprefix("user:"))))
        channel = self.get_channel(int(chat_id))
        if isinstance(channel, discord.abc.Messageable):
            return channel
        return self.get_partial_messageable(int(chat_id))

    async def _with_retries(self, call: Callable[[], Awaitable[T]]) -> T:
        """discord.py waits out 429s itself; this retries what it gave up on (5xx, network)."""
        for attempt in range(1, self.tuning.send_attempts + 1):
            try:
                return await call()
            except (discord.Forbidden, discord.NotFound):
                raise  # permanent: retrying cannot help
            except discord.HTTPException as exc:
                if (exc.status < 500 and exc.status != 429) or attempt == self.tuning.send_attempts:
                    raise
                log.warning("Discord said %s; trying again", exc.status)
            except (TimeoutError, OSError, aiohttp.ClientConnectionError):
                if attempt == self.tuning.send_attempts:
                    raise
                log.warning("Discord unreachable; trying again")
            await asyncio.sleep(self.tuning.retry_base_s * 2 ** (attempt - 1))
        raise AssertionError("unreachable")

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
