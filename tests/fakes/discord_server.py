"""A fake Discord (REST API v10 + gateway) on 127.0.0.1 that the real discord.py client uses.

One aiohttp server: REST under ``/api/v10``, the gateway websocket at ``/`` on the same port,
so ``DISCORD_BASE_URL=<fake.base_url>`` is all a bot needs. Tests drive it with
``push_message`` / ``push_interaction`` / ``drop_connection`` / ``hold_history`` and read
what the bot did from ``sent``, ``calls``, ``interaction_responses`` and ``history``;
``wait_for`` polls a predicate with a deadline. ``attachment(data, name, type)`` stores a
file and gives the attachment object to pass to ``push_message(attachments=[...])``; its URL
is served on the same port (``/attachments/…``, like Discord's CDN) and counted in
``downloads``. It runs in the test's event loop
(``async with FakeDiscord()``) or in its own thread (``with FakeDiscord().in_thread()``) for
a bot run as a subprocess.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, TypeVar

from aiohttp import web

from bot.adapters.discord.base_url import point_discord_at, use_endpoints
from tests.fakes import discord_payloads as p
from tests.fakes.discord_gateway import Gateway
from tests.fakes.discord_rest import Call, RestRoutes

JSON = dict[str, Any]
T = TypeVar("T")

TOKEN = "fake-discord-token"
BOT_ID = 900_000_000_000_000_001  # on Discord the bot user's id is the application's id
OWNER_ID = 900_000_000_000_000_002
STRANGER_ID = 900_000_000_000_000_003
GUILD_ID = 900_000_000_000_000_010
CHANNEL_ID = 900_000_000_000_000_011  # the guild's text channel "general"
BOT_ROLE_ID = 900_000_000_000_000_012  # the bot's managed role in the guild
THREAD_ID = 900_000_000_000_000_013  # a public thread under "general"



class FakeDiscord:
    """The fake server; every control is safe to call from the test's thread or loop."""

    def __init__(self, *, token: str = TOKEN, heartbeat_interval_ms: int = 41_250,
                 interaction_ttl: float = 3.0, message_content_enabled: bool = True) -> None:
        self.token = token
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.interaction_ttl = interaction_ttl  # Discord's 3 s to acknowledge a press
        # The portal switch: without it, IDENTIFY asking for message content is refused (4014).
        self.message_content_enabled = message_content_enabled
        self.ids = p.Snowflakes()
        self.bot_user = p.user(BOT_ID, "frontdesk", bot=True)
        self.owner = p.user(OWNER_ID, "owner")
        self.stranger = p.user(STRANGER_ID, "stranger")
        self.users: dict[int, JSON] = {BOT_ID: self.bot_user, OWNER_ID: self.owner,
                                       STRANGER_ID: self.stranger}
        self.channels: dict[int, JSON] = {CHANNEL_ID: p.text_channel(CHANNEL_ID, GUILD_ID,
                                                                     "general")}
        self.channels[THREAD_ID] = p.thread_channel(THREAD_ID, CHANNEL_ID, GUILD_ID, "plans",
                                                    OWNER_ID)
        self.history_by_channel: dict[int, list[JSON]] = {CHANNEL_ID: [], THREAD_ID: []}
        self.sent: dict[int, list[JSON]] = {}  # the bot's messages per channel, edits applied
        self.files: dict[str, bytes] = {}  # attachment id -> its bytes
        self.downloads: Counter[str] = Counter()  # attachment id -> times fetched
        self.nonces: dict[tuple[int, str], JSON] = {}  # enforced nonces already used
        self.calls: list[Call] = []
        self.interactions: dict[int, JSON] = {}
        self.interaction_responses: list[JSON] = []  # {"interaction_id", "type", "data"}
        self.typing: dict[int, int] = {}
        self.edits: dict[str, list[str]] = {}  # message id -> each text an edit gave it
        self.deleted: list[JSON] = []  # messages the bot deleted
        self.commands: dict[int | None, list[JSON]] = {}  # guild id (None: global) -> list
        self.identifies: list[JSON] = []
        self.resumes: list[JSON] = []
        self.heartbeats = 0
        self.rate_limit_violations: list[Call] = []
        self._rate_limits: list[JSON] = []
        self.history_reads_held: list[int] = []  # channel ids of history reads kept waiting
        self._held_history: set[int] = set()
        self.gateway = Gateway(self)
        self._dm_by_user: dict[int, int] = {}
        self._lock = threading.RLock()
        self._changed_cond = threading.Condition(self._lock)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- addresses -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The REST base, the value for ``DISCORD_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> FakeDiscord:
        """Serve on a free port of 127.0.0.1 in the running loop."""
        self._loop = asyncio.get_running_loop()
        app = web.Application()
        app.router.add_get("/", self.gateway.handle)
        app.router.add_get("/attachments/{channel}/{id}/{name}", self._serve_attachment)
        app.router.add_route("*", "/api/v10/{tail:.*}", RestRoutes(self).handle)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def stop(self) -> None:
        await self.gateway.close_all(1001)
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @contextmanager
    def in_thread(self) -> Iterator[FakeDiscord]:
        """Run the server in a thread of its own (for a bot started as a subprocess)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=serve, name="fake-discord", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fake Discord server did not start within 10 s")
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(10)
            loop.close()

    # -- people and places -----------------------------------------------------------------
    def add_user(self, name: str, user_id: int | None = None) -> JSON:
        """Another person who is a member of the guild."""
        with self._lock:
            user = p.user(user_id or self.ids.next(), name)
            self.users[int(user["id"])] = user
            return user

    def dm_channel_id(self, user_id: int) -> int:
        """The DM channel between the bot and ``user_id`` (created on first use)."""
        with self._lock:
            if user_id not in self._dm_by_user:
                channel_id = self.ids.next()
                self._dm_by_user[user_id] = channel_id
                self.channels[channel_id] = p.dm_channel(channel_id, self.users[user_id])
                self.history_by_channel[channel_id] = []
            return self._dm_by_user[user_id]

    def member_of(self, user: JSON) -> JSON:
        roles = [str(BOT_ROLE_ID)] if user["id"] == str(BOT_ID) else []
        return p.member(user, roles=roles)

    def guild_payload(self) -> JSON:
        return p.guild(GUILD_ID, "Front office", owner_id=OWNER_ID,
                       channels=[self.channels[CHANNEL_ID]],
                       members=[self.member_of(u) for u in self.users.values()],
                       bot_role_id=BOT_ROLE_ID, bot_id=BOT_ID,
                       threads=[self.channels[THREAD_ID]])

    def history(self, channel_id: int) -> list[JSON]:
        """Every message of a channel, oldest first (what GET .../messages serves)."""
        with self._lock:
            return list(self.history_by_channel.get(channel_id, []))

    def sent_to(self, channel_id: int) -> list[JSON]:
        with self._lock:
            return list(self.sent.get(channel_id, []))

    def find_message(self, message_id: int | str) -> JSON | None:
        with self._lock:
            for messages in self.history_by_channel.values():
                for message in messages:
                    if message["id"] == str(message_id):
                        return message
            return None

    # -- test controls ---------------------------------------------------------------------
    def attachment(self, data: bytes, filename: str, content_type: str | None, *,
                   flags: int = 0, size: int | None = None) -> JSON:
        """Store a file; the attachment object a message carries (``size`` as declared)."""
        with self._lock:
            attachment_id = self.ids.next()
            url = f"http://127.0.0.1:{self.port}/attachments/1/{attachment_id}/{filename}"
            self.files[str(attachment_id)] = data
        found: JSON = {"id": str(attachment_id), "filename": filename,
                       "size": len(data) if size is None else size, "url": url,
                       "proxy_url": url, "flags": flags}
        if content_type is not None:
            found["content_type"] = content_type
        return found

    async def _serve_attachment(self, request: web.Request) -> web.Response:
        with self._lock:
            data = self.files.get(request.match_info["id"])
            if data is not None:
                self.downloads[request.match_info["id"]] += 1
        self._changed()
        return web.Response(status=404) if data is None else web.Response(body=data)

    def push_message(self, content: str, *, author: JSON | None = None, guild: bool = False,
                     mention_bot: bool = False, reply_to: JSON | None = None,
                     dispatch: bool = True, mention_role: bool = False,
                     thread: bool = False, attachments: list[JSON] | None = None) -> JSON:
        """A person writes to the bot: a DM, or in the guild channel when ``guild`` (in its
        thread when ``thread``); ``mention_role`` mentions the bot's managed role, as
        Discord's autocomplete often offers it instead of the bot; ``attachments`` its files.

        The message goes into the channel's history first, so with ``dispatch=False`` (or no
        bot connected) it is what a bot that was down finds when it catches up.
        """
        author = author or self.owner
        with self._lock:
            message_id = self.ids.next()
            if guild or thread:
                channel_id, guild_id = (THREAD_ID if thread else CHANNEL_ID), GUILD_ID
            else:
                channel_id, guild_id = self.dm_channel_id(int(author["id"])), None
            mentions = [self.bot_user] if mention_bot else []
            text = f"<@{BOT_ID}> {content}" if mention_bot else content
            text = f"<@&{BOT_ROLE_ID}> {text}" if mention_role else text
            message = p.message(message_id, channel_id, author, text, guild_id=guild_id,
                                author_member=self.member_of(author) if guild_id else None,
                                mentions=mentions, reply_to=reply_to,
                                mention_roles=[str(BOT_ROLE_ID)] if mention_role else None)
            message["attachments"] = attachments or []
            self.history_by_channel[channel_id].append(message)
        if dispatch:
            self.dispatch("MESSAGE_CREATE", message)
        self._changed()
        return message

    def push_interaction(self, custom_id: str, *, message: JSON,
                         presser: JSON | None = None) -> JSON:
        """Someone presses the button ``custom_id`` on ``message`` (one the bot sent)."""
        presser = presser or self.owner
        with self._lock:
            interaction_id = self.ids.next()
            token = f"interaction-token-{interaction_id}"
            guild_id = int(message["guild_id"]) if "guild_id" in message else None
            payload = p.component_interaction(
                interaction_id, token, app_id=BOT_ID, custom_id=custom_id, presser=presser,
                channel=self.channels[int(message["channel_id"])],
                message_payload=self.find_message(message["id"]) or message,
                guild_id=guild_id, presser_member=self.member_of(presser) if guild_id else None)
            self.interactions[interaction_id] = {"payload": payload, "at": time.monotonic(),
                                                 "acknowledged": False,
                                                 "message_id": message["id"]}
        self.dispatch("INTERACTION_CREATE", payload)
        return payload

    def dispatch(self, event: str, data: JSON) -> None:
        """Send a DISPATCH to every session (also to re-deliver an event on purpose)."""
        self._on_loop(lambda: self.gateway.dispatch(event, data))

    def drop_connection(self, code: int = 4000) -> None:
        """Close every gateway websocket with a resumable code; the client RESUMEs."""
        self._on_loop(lambda: asyncio.ensure_future(self.gateway.close_all(code)))

    def refuse_next_resume(self) -> None:
        """Answer the next RESUME with INVALID_SESSION, so the client IDENTIFYs afresh."""
        self._on_loop(lambda: setattr(self.gateway, "refuse_next_resume", True))

    def rate_limit(self, count: int = 1, *, retry_after: float = 0.2, method: str = "POST",
                   path_pattern: str = r"/channels/\d+/messages") -> None:
        """Answer the next ``count`` matching requests with 429 and ``retry_after``."""
        with self._lock:
            self._rate_limits.append({"count": count, "retry_after": retry_after,
                                      "method": method, "pattern": re.compile(path_pattern),
                                      "blocked_until": 0.0})

    def hold_history(self, channel_id: int) -> None:
        """Keep every history read of a channel waiting until ``release_history``."""
        with self._lock:
            self._held_history.add(channel_id)

    def release_history(self, channel_id: int) -> None:
        """Let the held history reads of a channel (and later ones) be answered."""
        with self._lock:
            self._held_history.discard(channel_id)
        self._changed()

    async def wait_for(self, predicate: Callable[[], T], timeout: float = 5.0,
                       what: str = "condition") -> T:
        """Return ``predicate()`` once truthy; re-checked on every change, until a deadline."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        entry = (loop, changed)
        deadline = loop.time() + timeout
        with self._lock:
            self._waiters.append(entry)
        try:
            while True:
                changed.clear()  # before checking, so a change in between is not missed
                result = predicate()
                if result:
                    return result
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise self._timed_out(what, timeout)
                with suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), remaining)
        finally:
            with self._lock:
                self._waiters.remove(entry)

    def wait_for_blocking(self, predicate: Callable[[], T], timeout: float = 5.0,
                          what: str = "condition") -> T:
        """``wait_for`` for code without an event loop (the server must run ``in_thread``)."""
        deadline = time.monotonic() + timeout
        with self._changed_cond:
            while True:
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._timed_out(what, timeout)
                self._changed_cond.wait(remaining)

    def describe_calls(self, last: int = 8) -> str:
        return ", ".join(f"{c.method} {c.path} -> {c.status}" for c in self.calls[-last:])

    def _timed_out(self, what: str, timeout: float) -> TimeoutError:
        return TimeoutError(f"fake Discord: no {what} within {timeout} s; "
                            f"last calls: {self.describe_calls()}")

    # -- internals shared with the REST and gateway halves ---------------------------------
    def _changed(self) -> None:
        with self._lock:
            self._changed_cond.notify_all()
            for loop, event in self._waiters:
                loop.call_soon_threadsafe(event.set)

    def _on_loop(self, action: Callable[[], object]) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(action)


@asynccontextmanager
async def discord_py_on_fake() -> AsyncIterator[FakeDiscord]:
    """A fake Discord with discord.py pointed at it (a process-wide setting), put back after."""
    async with FakeDiscord() as fake:
        previous = point_discord_at(fake.base_url)
        try:
            yield fake
        finally:
            use_endpoints(previous)
