"""Reach the owner with urgent notices that nobody else can forge and nobody can flood.

A ``Notice`` is Frontdesk's own bold header, then other people's words in quote blocks. What
someone else wrote (``Theirs``: a name, a message) is cleaned and backslash-escaped, so both
chat renderers show it exactly as typed: no link, no bold, no header of theirs; a name is kept
to one short line. ``OwnerNotifier`` sends at most one notice per incoming message and at most
``LIMIT`` notices per person in any ``WINDOW_S``; an urgent message beyond that waits in the
``notices`` table and leaves, with the others held for that person, as one summary when the
next slot opens. A timer wakes then; after a restart the held ones leave at ``resume()`` or
at the next notice, whichever comes first.

Usage::

    notifier = OwnerNotifier(settings, outbox, NoticeLog(db))  # its table: ``notices``
    await notifier.notify(caller, "the boiler is leaking")
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.config.settings import Settings
from bot.config.text import clean, escape_markdown, one_name
from bot.delivery.hourly import HourlyQueue
from bot.delivery.outbox import Outbox
from bot.tools.registry import Caller
from sqlitedb import transaction
from sqlitedb.database import Database

log = logging.getLogger(__name__)
PLATFORMS = ("telegram", "discord")
LIMIT = 5  # notices per person ...
WINDOW_S = 3600.0  # ... in any hour
SUMMARY_ITEMS, SUMMARY_ITEM_CHARS = 20, 1000  # what one summary quotes at most
SENT = "I've passed your message on to the owner right away; they'll get back to you."
HELD = ("I've passed your message on to the owner. You have sent several this hour, so it "
        "reaches them together with the others within the hour.")

@dataclass(frozen=True)
class Theirs:
    """Words someone else wrote (a name, a message): always plain text, never markup."""

    text: str


@dataclass(frozen=True)
class Notice:
    """Frontdesk's own header line, then other people's words, one quote block each."""

    header: tuple[str | Theirs, ...]
    quotes: tuple[str, ...] = ()

    def markdown(self) -> str:
        """For the chat platforms: a bold header, the quotes as escaped ``> `` lines."""
        head = "".join(part if isinstance(part, str) else escape_markdown(one_name(part.text))
                       for part in self.header)
        blocks = ["\n".join("> " + escape_markdown(line.rstrip())
                            for line in clean(quote).strip("\n").split("\n"))
                  for quote in self.quotes]
        return "\n\n".join([f"**{head}**\n{blocks[0]}" if blocks else f"**{head}**",
                            *blocks[1:]])

    def plain(self) -> str:
        """For a terminal, which shows text as it is: header, then the words."""
        head = "".join(part if isinstance(part, str) else one_name(part.text)
                       for part in self.header)
        return "\n\n".join([f"{head}\n{self.quotes[0]}" if self.quotes else head,
                            *self.quotes[1:]])


@dataclass(frozen=True)
class Urgent:
    """One incoming urgent message, and the notice that carried it (None while held)."""

    key: str
    scope: str
    name: str
    platform: str
    text: str
    received_at: float
    notice: str | None = None
    sent_at: float | None = None


def urgent_notice(item: Urgent) -> Notice:
    """``Urgent message from NAME (SCOPE) on PLATFORM:`` and the words."""
    return Notice((*_who(item), f" on {item.platform}:"), (item.text,))


def summary_notice(items: Sequence[Urgent]) -> Notice:
    """The messages held back for one person, in the order they came, as one notice."""
    first, count = items[0], len(items)
    shown = [i.text if len(i.text) <= SUMMARY_ITEM_CHARS else i.text[:SUMMARY_ITEM_CHARS] + "…"
             for i in items[:SUMMARY_ITEMS]]
    more = f" (the first {SUMMARY_ITEMS} shown)" if count > SUMMARY_ITEMS else ""
    noun = "message" if count == 1 else "messages"
    return Notice((f"{count} more urgent {noun} from ", *_who(first)[1:],
                   f" on {first.platform}, held back by the limit of {LIMIT} notices an hour"
                   f"{more}:"), tuple(shown))


def _who(item: Urgent) -> tuple[str | Theirs, ...]:
    if item.name:
        return ("Urgent message from ", Theirs(item.name), " (", Theirs(item.scope), ")")
    return ("Urgent message from ", Theirs(item.scope))


def notice_key(caller: Caller, text: str) -> str:
    """One key per incoming message (the text counts only when no message is known)."""
    origin = f"{caller.scope}|{caller.chat_id}|{caller.message_id}"
    if not caller.message_id:
        origin += f"|{text}"
    return "notice:" + hashlib.sha256(origin.encode()).hexdigest()[:24]


MIGRATIONS = [
    ("notices_001_create", """
        CREATE TABLE notices (
            key TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            name TEXT NOT NULL,
            platform TEXT NOT NULL,
            text TEXT NOT NULL,
            received_at REAL NOT NULL,
            notice TEXT,
            sent_at REAL
        );
        CREATE INDEX notices_by_scope ON notices (scope, sent_at);
        CREATE INDEX notices_held ON notices (received_at) WHERE notice IS NULL;
    """),
]
_COLUMNS = "key, scope, name, platform, text, received_at, notice, sent_at"


class NoticeLog:
    """The ``notices`` table: each urgent message, and when which notice carried it."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def get(self, key: str) -> Urgent | None:
        """The message with this key, if it was seen."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM notices WHERE key = ?",
                                (key,)).fetchone()
        return Urgent(*row) if row else None

    def record(self, item: Urgent) -> None:
        """Keep a message (once per key)."""
        self.conn.execute(f"INSERT OR IGNORE INTO notices ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                          (item.key, item.scope, item.name, item.platform, item.text,
                           item.received_at, item.notice, item.sent_at))

    def sent_times(self, scope: str, since: float) -> list[float]:
        """When each notice to this person after ``since`` left, oldest first."""
        rows = self.conn.execute(
            "SELECT MIN(sent_at) FROM notices WHERE scope = ? AND notice IS NOT NULL"
            " AND sent_at > ? GROUP BY notice ORDER BY 1", (scope, since)).fetchall()
        return [float(row[0]) for row in rows]

    def held(self) -> list[Urgent]:
        """Messages waiting for a slot, oldest first."""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM notices WHERE notice IS NULL"
                                 " ORDER BY received_at, rowid").fetchall()
        return [Urgent(*row) for row in rows]

    def prune(self, before: datetime, now: datetime) -> dict[str, int]:
        """Forget the messages whose notice left before ``before`` and more than ``WINDOW_S``
        ago (the hourly count still reads those of the last hour); one still held stays. The
        rows removed."""
        horizon = min(before.timestamp(), now.timestamp() - WINDOW_S)
        removed = self.conn.execute(
            "DELETE FROM notices WHERE notice IS NOT NULL AND sent_at < ?", (horizon,)).rowcount
        return {"notices": removed}

    def carried(self, keys: Sequence[str], notice: str, at: float) -> None:
        """These held messages left in ``notice`` at ``at``."""
        with transaction(self.conn):
            self.conn.executemany("UPDATE notices SET notice = ?, sent_at = ? WHERE key = ?",
                                  [(notice, at, key) for key in keys])


class OwnerNotifier:
    """Reaches the owner with urgent notices on the right platform(s), through
    the same outbox as every reply, one per message and at most ``LIMIT`` an hour a person."""

    def __init__(self, settings: Settings, outbox: Outbox, notices: NoticeLog, *,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.settings = settings
        self.outbox = outbox
        self.notices = notices
        self.clock = clock
        self.sleep = sleep
        self.hourly = HourlyQueue(
            limit=LIMIT, window_s=WINDOW_S, sent_times=self.notices.sent_times,
            held_scopes=lambda: [item.scope for item in self.notices.held()],
            send_held=self._send_summary, failure="could not send the held urgent messages",
            clock=lambda: self.clock(), sleep=lambda s: self.sleep(s))

    def targets(self, origin: str) -> list[str]:
        """Platforms to notify: FRONTDESK_NOTIFY, else the origin if it has an owner, else
        the first platform with an owner id, else the console."""
        owners = self.settings.owner_ids()
        configured = [p for p in PLATFORMS if p in owners]
        choice = (self.settings.notify or "").lower()
        if choice == "all" and configured:
            return configured
        if choice in owners:
            return [choice]
        if origin in configured:
            return [origin]
        return configured[:1] or ["console"]

    async def notify(self, caller: Caller, text: str) -> str:
        """Pass ``who wrote what`` on to the owner; return the sentence for the sender.

        The first call for a message decides: a notice now, or held for the next slot; any
        later call for the same message (a retry, a model calling the tool again) sends nothing.
        """
        if caller.is_owner:
            return "You are the owner, so there is no one to pass this on to; noted."
        key = notice_key(caller, text)
        async with self.hourly.lock:
            now = self.clock()
            await self.hourly.send_due(now)
            item = self.notices.get(key)
            if item is None:
                item = Urgent(key, caller.scope, caller.name, caller.platform, text, now)
                if self.hourly.has_room(item.scope, now):
                    await self._send(urgent_notice(item), key, item.platform)
                    item = replace(item, notice=key, sent_at=now)
                self.notices.record(item)  # after the send: a crash in between re-sends
            self.hourly.schedule()        # under the same outbox key, which the outbox ignores
        return SENT if item.notice else HELD

    async def resume(self) -> None:
        """At start: send the summaries whose slot opened while down, and set the timer."""
        await self.hourly.resume()

    async def owner_place(self, origin: str = "") -> tuple[str, str]:
        """Where the owner is reached about something from ``origin``: the first of
        ``targets`` and the owner's direct chat there."""
        platform = self.targets(origin)[0]
        return platform, await self.owner_chat(platform)

    async def owner_chat(self, platform: str) -> str:
        """The owner's direct chat on a platform (through its adapter when it runs)."""
        if chat := await self.outbox.owner_chat(platform):
            return chat
        owner = self.settings.owner_ids().get(platform)
        if owner and platform == "telegram":  # a private chat's id is its user's id
            return owner
        return f"user:{owner}" if owner else "console"  # Discord opens the DM from it

    # -- the hourly limit -----------------------------------------------------------------
    async def _send_summary(self, scope: str, now: float) -> None:
        """One summary of the messages held for this person, now that they have a slot."""
        items = [item for item in self.notices.held() if item.scope == scope]
        if not items:
            return
        keys = [item.key for item in items]
        summary = "notice-summary:" + hashlib.sha256("|".join(keys).encode()).hexdigest()[:24]
        await self._send(summary_notice(items), summary, items[0].platform)
        self.notices.carried(keys, summary, now)

    async def _send(self, notice: Notice, key: str, origin: str) -> None:
        for platform in self.targets(origin):
            chat = await self.owner_chat(platform)
            # The console shows text as it is; the chat platforms render Markdown.
            text = notice.plain() if platform == "console" else notice.markdown()
            await self.outbox.deliver(platform, chat, key, text)
