"""Each chat's jobs one after another, chats side by side: how an adapter answers what it
reads (a chat's messages in their order, another chat never waiting for it). A chat's entry is
dropped once its last job ends, so nothing is kept per chat that has gone quiet."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class ChatChains:
    """Jobs chained per chat; ``tasks`` are those not finished yet (a stop waits or cancels)."""

    def __init__(self) -> None:
        self.latest: dict[str, asyncio.Task[None]] = {}  # chat -> its latest job
        self.tasks: set[asyncio.Task[None]] = set()

    def add(self, chat: str, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job`` after the chat's earlier jobs have ended (however they ended)."""
        previous = self.latest.get(chat)

        async def run() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await job()

        task = asyncio.create_task(run())
        self.latest[chat] = task
        self.tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self.tasks.discard(finished)
            if self.latest.get(chat) is finished:
                del self.latest[chat]

        task.add_done_callback(done)

    async def cancel(self) -> None:
        """Cancel every job not finished (a stop) and wait until they have ended."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
