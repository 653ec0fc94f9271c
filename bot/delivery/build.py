"""The delivery concern, built: the ledger's stores, the outbox, live replies, the notifier.

``build`` is what the assembler (``bot.app``) calls: every store over the one database, the one
``Outbox`` that everything sends through, the live replies that show an answer as it is
written, the owner notifier (urgent messages, the hourly limit), and the watch over a full
disk.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.delivery.cursors import Cursors
from bot.delivery.disk import DiskWatch
from bot.delivery.drafts import Drafts
from bot.delivery.files import OutboxFiles
from bot.delivery.inbox import Inbox
from bot.delivery.ledger import ledger_stores
from bot.delivery.live import LiveReplies
from bot.delivery.notifier import NoticeLog, OwnerNotifier
from bot.delivery.outbox import Outbox
from bot.delivery.pace import WritePace
from bot.delivery.parts import OutboxParts
from bot.delivery.run_chats import RunChats
from bot.delivery.shown import LiveMessages
from bot.messages import OutgoingFile
from sqlitedb.database import Database


@dataclass(frozen=True)
class Delivery:
    """What comes in is recorded, what goes out is queued and sent once."""

    inbox: Inbox  # every message, recorded before any work
    parts: OutboxParts  # every reply's parts, before they are sent
    buttons: Buttons  # the buttons' tokens and their kinds
    cursors: Cursors  # where each adapter keeps its place
    run_chats: RunChats  # which chat each run was started in
    outbox: Outbox  # the one everything sends through
    live: LiveReplies  # an answer shown as it is written (FRONTDESK_STREAM)
    notifier: OwnerNotifier  # urgent messages to the owner, at most so many an hour
    disk: DiskWatch  # a full disk: said once, watched until there is room
    drafts: Drafts  # replies held for the owner's approval

    async def tell_owner(self, origin: str, key: str, text: str,
                         file: OutgoingFile | None = None) -> None:
        """A notice to the owner (a meeting's, with a file: the event's .ics), once per key,
        on the platform ``origin`` names when the owner is there."""
        platform, chat = await self.notifier.owner_place(origin)
        await self.outbox.deliver(platform, chat, key, text, file=file)


def build(settings: Settings, db: Database, *, clock: Callable[[], float] = time.time,
          sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> Delivery:
    """Every delivery store over ``db``; ``clock``/``sleep`` pace the notifier's hourly limit."""
    ledger = ledger_stores(db)
    shown = LiveMessages(db)  # live replies' partial messages
    pace = WritePace(settings.writes_per_second)  # every chat's writes together
    outbox = Outbox(ledger.parts, shown, OutboxFiles(db), pace)  # + replies' files
    live = LiveReplies(outbox.adapter, shown, on=settings.stream,
                       interval=settings.stream_interval, pace=pace)
    notifier = OwnerNotifier(settings, outbox, NoticeLog(db), clock=clock, sleep=sleep)
    disk = DiskWatch(settings.home, outbox, notifier, ledger.cursors)
    return Delivery(ledger.inbox, ledger.parts, ledger.buttons, ledger.cursors,
                    ledger.run_chats, outbox, live, notifier, disk, Drafts(db))
