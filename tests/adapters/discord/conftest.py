"""Fixtures for the Discord tests: the fake server, discord.py pointed at it, a recording client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TypeVar

import discord
import pytest

from bot.adapters.discord.base_url import point_discord_at, use_endpoints
from tests.fakes.discord_server import TOKEN, FakeDiscord

T = TypeVar("T")


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


@pytest.fixture
def pointed(fake: FakeDiscord) -> Iterator[FakeDiscord]:
    """discord.py aimed at the fake for this test only (the setting is process-wide)."""
    previous = point_discord_at(fake.base_url)
    yield fake
    use_endpoints(previous)


class RecordingClient(discord.Client):
    """A plain discord.py client that records what reaches it."""

    def __init__(self, *, message_content: bool = True, **options: Any) -> None:
        intents = discord.Intents.default()
        intents.message_content = message_content
        # Discord waits 2 s after the last GUILD_CREATE before on_ready; the fake needs none.
        super().__init__(intents=intents, guild_ready_timeout=0.05, **options)
        self.events: list[str] = []
        self.messages: list[discord.Message] = []
        self.views_to_register: list[discord.ui.View] = []
        self._changed = asyncio.Event()

    async def setup_hook(self) -> None:
        for view in self.views_to_register:
            self.add_view(view)  # persistent: matched by custom_id, whatever the message

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """No pause: discord.py waits 5 s before every IDENTIFY but the first (Discord's
        identify rate limit), which the fake does not have."""

    def _note(self, event: str) -> None:
        self.events.append(event)
        self._changed.set()

    async def on_ready(self) -> None:
        self._note("ready")

    async def on_resumed(self) -> None:
        self._note("resumed")

    async def on_message(self, message: discord.Message) -> None:
        self.messages.append(message)
        self._note("message")

    async def until(self, predicate: Callable[[], T], timeout: float = 5.0) -> T:
        """Wait for ``predicate()`` to hold, re-checked after each recorded event."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            self._changed.clear()
            result = predicate()
            if result:
                return result
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise TimeoutError(f"client never got there; events: {self.events}")
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)


@asynccontextmanager
async def running(client: discord.Client, token: str = TOKEN) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``client`` until the block ends; closes it cleanly either way."""
    task = asyncio.create_task(client.start(token))
    try:
        yield task
    finally:
        await client.close()
        with suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


async def started(client: RecordingClient) -> None:
    """Wait until on_ready (READY and GUILD_CREATE processed)."""
    await client.until(lambda: "ready" in client.events)
