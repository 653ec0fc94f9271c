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

Usage::

    await run_discord(gateway, ledger, settings)    # ``frontdesk run`` with a token set
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import discord
from discord import app_commands

from bot.adapters.base import Attachment, Button, IncomingMessage, PressResult, Undeliverable
from bot.adapters.discord import files as discord_files
from bot.adapters.discord.base_url import point_discord_at
from bot.adapters.discord.format import split_reply
from bot.adapters.discord.ui import ApprovalButton, add_slash_commands, approval_view
from bot.chat.gateway import Gateway
from bot.config.banner import adapter_line, announce
from bot.config.settings import Settings
from bot.delivery.ledger import Ledger

log = logging.getLogger(__name__)
T = TypeVar("T")

PLATFORM = "discord"
CURSOR_PREFIX = "discord:channel:"  # + channel id -> every message up to this id is taken
TYPING_EVERY_S = 8.0  # Discord shows "typing…" for 10 s after each trigger
NO_CONTENT_INTENT = (
    "Discord refused the connection: the bot's Message Content Intent is off. Turn it on in "
    "the Developer Portal (your application → Bot → Privileged Gateway Intents → Message "
    "Content Intent), save, and start Frontdesk again.")
BAD_TOKEN = ("Discord refused DISCORD_BOT_TOKEN. Copy the bot's token again from the "
             "Developer Portal (your application → Bot → Reset Token) into .env.")


@dataclass(frozen=True)
class DiscordTuning:
    """discord.py's waits, made shorter for tests against a local fake.

    ``ready_timeout``: how long discord.py waits after the last GUILD_CREATE before on_ready
    (2 s on Discord). ``identify_delay``: the pause before every IDENTIFY but the first
    (Discord's identify rate limit, 5 s). ``send_attempts``/``retry_base_s``: our own retries
    of a send that discord.py gave up on (it already waits out rate limits by itself).
    """

    ready_timeout: float = 2.0
    identify_delay: float = 5.0
    send_attempts: int = 5
    retry_base_s: float = 1.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DiscordTuning:
        """``FRONTDESK_DISCORD_READY_TIMEOUT`` and ``FRONTDESK_DISCORD_IDENTIFY_DELAY``."""
        def number(name: str, default: float) -> float:
            raw = (env.get(name) or "").strip()
            return float(raw) if raw else default

        return cls(ready_timeout=number("FRONTDESK_DISCORD_READY_TIMEOUT", cls.ready_timeout),
                   identify_delay=number("FRONTDESK_DISCORD_IDENTIFY_DELAY",
                                         cls.identify_delay),
                   retry_base_s=number("FRONTDESK_DISCORD_RETRY_BASE", cls.retry_base_s))


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

    def __init__(self, gateway: Gateway, ledger: Ledger, settings: Settings,
                 tuning: DiscordTuning | None = None) -> None:
        self.tuning = tuning or DiscordTuning()
        super().__init__(intents=intents(), guild_ready_timeout=self.tuning.ready_timeout,
                         allowed_mentions=discord.AllowedMentions.none())
        self.gateway = gateway
        self.ledger = ledger  # the inbox (what is known) and the channel cursors
        self.owner_id = settings.discord_owner_id
        self.allowed_ids = settings.discord_allowed_users  # for the start-up banner
        self.tree: app_commands.CommandTree[DiscordAdapter] = app_commands.CommandTree(self)
        self.serving = asyncio.Event()  # set once attached to the gateway
        self._owner_dm: str | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._read_back: set[int] = set()  # channels read back since this session began

    # -- discord.py hooks ------------------------------------------------------------------
    async def setup_hook(self) -> None:
        """Before connecting: buttons from any earlier run, the slash commands."""
        self.add_dynamic_items(ApprovalButton)
        add_slash_commands(self.tree, self.run_slash_command)

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

        The outbox part's ``key`` becomes an enforced nonce, so Discord itself answers a
        repeat (a retry, or a re-send after a crash) with the message it already made.
        """
        channel = await self._messageable(chat_id)
        view = approval_view(buttons) if buttons else None
        nonce: str | int = key[:25] if key else secrets.randbits(64)  # randbits: as discord.py

        async def post() -> discord.Message:
            if view is None:
                return await channel.send(text, nonce=nonce)
            return await channel.send(text, view=view, nonce=nonce)

        try:
            message = await self._with_retries(post)
        except discord.HTTPException as refused:
            if refused.status < 500 and refused.status != 429:  # 403, 404, 400: for good
                raise Undeliverable(f"Discord: {refused.status} {refused.text}") from refused
            raise
        return str(message.id)  # the outbox marks it sent at once

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
                accepted = self.gateway.accept(msg)  # None: a re-delivery, answered already
        self.passed(message.channel.id, message.id, reading_back=reading_back)
        if accepted is not None:
            async with typing_in(message.channel):
                try:
                    # read back one by one: waiting for more lines would only add time
                    await self.gateway.process(accepted, gather=not reading_back)
                except Exception:  # the inbox keeps it: answered at the next start
                    log.exception("handling Discord message %s failed", message.id)

    def passed(self, channel_id: int, message_id: int, *, reading_back: bool = False) -> None:
        """Move a channel's cursor past a taken message (never back: answers finish out of
        order); a live message in a channel not yet read back leaves it where it is."""
        name = CURSOR_PREFIX + str(channel_id)
        current = self.ledger.cursor(name)
        if current is None:  # a channel never seen: nothing before this message to read back
            self._read_back.add(channel_id)
        elif not reading_back and channel_id not in self._read_back:
            return
        if current is None or int(current) < message_id:
            self.ledger.set_cursor(name, str(message_id))

    async def catch_up(self) -> int:
        """Read every known channel from its cursor; answer what is new."""
        found = 0
        for name, last in self.ledger.cursors(CURSOR_PREFIX).items():
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
                await self.gateway.attach(self, background=True)
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
        return await self.gateway.press(PLATFORM, user_id, token, press_id)

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
        await self.gateway.handle(msg)

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


@contextlib.asynccontextmanager
async def typing_in(channel: Any) -> Any:
    """Show "typing…" in ``channel`` until the block ends; a failed trigger changes nothing."""
    done = asyncio.Event()

    async def keep_typing() -> None:
        while not done.is_set():
            with contextlib.suppress(discord.HTTPException, OSError, aiohttp.ClientError):
                await channel.typing()  # one trigger, never cut off mid-request
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), TYPING_EVERY_S)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        done.set()
        await task


async def run_discord(gateway: Gateway, ledger: Ledger, settings: Settings, *,
                      tuning: DiscordTuning | None = None) -> None:
    """Connect and serve until cancelled; a setup mistake stops the program with a clear
    message (``SystemExit``), never a stack trace."""
    if not settings.discord_bot_token:
        raise SystemExit("DISCORD_BOT_TOKEN is not set.")
    point_discord_at(settings.discord_base_url)
    client = DiscordAdapter(gateway, ledger, settings,
                            tuning or DiscordTuning.from_env(os.environ))
    try:
        async with client:
            await client.start(settings.discord_bot_token)
    except discord.PrivilegedIntentsRequired:
        raise SystemExit(f"frontdesk: {NO_CONTENT_INTENT}") from None
    except discord.LoginFailure:
        raise SystemExit(f"frontdesk: {BAD_TOKEN}") from None
