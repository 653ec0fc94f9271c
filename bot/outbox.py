"""The outbox: every reply is written to the ledger as numbered parts, then sent once, in order.

One ``Outbox`` is built from the ledger and shared by everything that sends: the gateway's
replies and the owner notifier's notices go through the same parts, the same adapters and the
same per-chat send locks, so a notice and a reply to one chat never interleave and a crash
between writing and sending resumes with the parts not yet sent (``flush`` at attach).

Usage::

    outbox = Outbox(ledger)
    outbox.register(adapter)                   # the platform's adapter, once it runs
    await outbox.deliver("telegram", "42", "m-7", "Hello!")
    await outbox.flush("telegram")             # what a crash left unsent
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from bot.inbox import Ledger
from bot.messages import Adapter, Button


class Outbox:
    """The ledger's outbox, the adapters that send it, and one send lock per chat."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.adapters: dict[str, Adapter] = {}  # platform -> its running adapter
        self.send_locks: dict[tuple[str, str], asyncio.Lock] = {}

    def register(self, adapter: Adapter) -> None:
        """Send this platform's parts through ``adapter`` from now on."""
        self.adapters[adapter.platform] = adapter

    def adapter(self, platform: str) -> Adapter | None:
        """The running adapter of a platform, if any."""
        return self.adapters.get(platform)

    async def owner_chat(self, platform: str) -> str | None:
        """The owner's direct chat as the platform's adapter knows it; None without one."""
        adapter = self.adapters.get(platform)
        return await adapter.owner_chat() if adapter is not None else None

    async def deliver(self, platform: str, chat_id: str, key: str, text: str,
                      buttons: Iterable[Button] | None = None) -> None:
        """Write the reply's parts (once per ``key``), then send those not yet sent.

        Without a running adapter the parts wait in the ledger, unsplit, for ``flush``.
        """
        adapter = self.adapters.get(platform)
        texts = adapter.split(text) if adapter else [text]
        marks = [{"label": b.label, "token": b.token} for b in buttons or []]
        self.ledger.enqueue(platform, chat_id, key, texts, marks or None)
        if adapter is not None:
            await self.flush(platform, chat_id)

    async def flush(self, platform: str, chat_id: str | None = None) -> None:
        """Send every unsent part of a platform (or one chat), in order, each at most once."""
        adapter = self.adapters.get(platform)
        if adapter is None:
            return
        chats = ([chat_id] if chat_id is not None
                 else list(dict.fromkeys(part.chat_id for part in self.ledger.unsent(platform))))
        for chat in chats:
            # One lock per chat: a chat waiting out flood control does not hold up the others.
            async with self.send_locks.setdefault((platform, chat), asyncio.Lock()):
                for part in self.ledger.unsent(platform):
                    if part.chat_id != chat:
                        continue
                    buttons = [Button(b["label"], b["token"]) for b in part.buttons or []]
                    message_id = await adapter.send(part.chat_id, part.text, buttons or None,
                                                    key=f"fd{part.id}")
                    self.ledger.mark_sent(part.id, message_id)
