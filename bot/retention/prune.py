"""Removing what is older than FRONTDESK_KEEP_DAYS, every table's owner asked in one place.

Each store removes its own old rows (a ``prune(before)`` method beside the code that writes
them, returning the rows removed per table): the runs that ended with their events, waits and
steps (``graphs.runs``), the inbox's answered messages (their payload; the key stays while
the platform could still deliver the message again), sent outbox parts and their files,
run buttons whose wait is decided, run filings, leftover live messages, per-call cost rows
(folded into each day's totals first), past reminders and meetings. Never removed: a run still
running or waiting and what points at it, a reminder or meeting still ahead, memory notes and
chat history, the people. Attachments left on disk and JSONL trace folders go too.

``prune`` does it all in one transaction, then gives the freed pages back to the file system
(``sqlitedb.vacuum.reclaim``); with ``dry_run`` the transaction is rolled back and no file is
touched, so the counts are what a real prune would remove now. The timer runs it daily
(``schedule_prune``: a task like the daily backup); ``frontdesk prune`` runs it now.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import time as TimeOfDay
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.delivery.files import OutboxFiles
from bot.delivery.inbox import Inbox
from bot.delivery.parts import OutboxParts
from bot.delivery.run_chats import RunChats
from bot.delivery.shown import LiveMessages
from bot.meetings.store import MeetingStore
from bot.models.costs import SpendLog
from bot.reminders.store import Reminder, Reminders
from graphs import trace
from graphs.runs import RunStore
from sqlitedb.database import Database
from sqlitedb.vacuum import reclaim

PRUNE_SOURCE = "setting:FRONTDESK_KEEP_DAYS"  # the daily task's source: one, ever
PRUNE_AT = TimeOfDay(3, 50)  # local: after the daily backup (03:30), so it holds the day
ATTACHMENTS = "attachments"  # under FRONTDESK_HOME (``bot.media.attachments``)


class DryRun(Exception):
    """Raised inside the transaction to roll every removal back (``dry_run``)."""


@dataclass
class Pruned:
    """What one prune removed (or would remove): rows per table, folders per kind."""

    days: float
    before: datetime
    dry_run: bool
    removed: dict[str, int] = field(default_factory=dict)  # table or folder -> how many
    bytes_before: int = 0
    bytes_after: int = 0

    @property
    def total(self) -> int:
        return sum(self.removed.values())

    def as_json(self) -> dict[str, object]:
        """The ``--json`` shape: the cut-off, each table's count, the file's size."""
        return {"days": self.days, "before": self.before.isoformat(), "dry_run": self.dry_run,
                "removed": dict(self.removed), "total": self.total,
                "database_bytes": {"before": self.bytes_before, "after": self.bytes_after}}


def prune(db: Database, settings: Settings, days: float | None = None, *,
          dry_run: bool = False, now: datetime | None = None) -> Pruned:
    """Remove what is older than ``days`` (FRONTDESK_KEEP_DAYS by default); what went."""
    keep = settings.keep_days if days is None else days
    moment = now or datetime.now(UTC)
    result = Pruned(keep, moment - timedelta(days=keep), dry_run)
    result.bytes_before = file_bytes(db.path)
    try:
        with db.transaction():
            result.removed = remove_rows(db, settings, result.before, moment)
            if dry_run:
                raise DryRun
    except DryRun:
        pass
    result.removed |= remove_files(settings, keep, moment, dry_run=dry_run)
    if not dry_run:
        reclaim(db.writer)
    result.bytes_after = file_bytes(db.path)
    return result


def remove_rows(db: Database, settings: Settings, before: datetime,
                now: datetime) -> dict[str, int]:
    """Every store's old rows, in one transaction (the caller's): the runs first, then what
    pointed at them, kept where it points at a run still open."""
    runs = RunStore(db)
    open_runs = runs.open_run_ids()
    parts = OutboxParts(db)
    unsent = parts.unsent_replies()
    zone = ZoneInfo(settings.timezone) if settings.timezone else None
    removed: dict[str, int] = {}
    for counts in (runs.prune(before),
                   Inbox(db).prune(before, now),
                   parts.prune(before),
                   OutboxFiles(db).prune(before, unsent),
                   Buttons(db).prune(before, open_runs),
                   RunChats(db).prune(before, open_runs),
                   LiveMessages(db).prune(before),
                   SpendLog(db, tz=zone, clock=now.timestamp).prune(before),
                   Reminders(db).prune(before),
                   MeetingStore(db).prune(before)):
        removed |= counts
    return removed


def remove_files(settings: Settings, days: float, now: datetime, *,
                 dry_run: bool) -> dict[str, int]:
    """The attachments' folders last written more than ``days`` ago (an answered message's
    are removed at once; these are what a crash left), and the trace day folders older than
    ``days`` (or FRONTDESK_TRACE_DAYS, whichever is shorter)."""
    before = now - timedelta(days=days)
    root = settings.home / ATTACHMENTS
    old = [folder for folder in (sorted(root.iterdir()) if root.is_dir() else [])
           if folder.is_dir() and folder.stat().st_mtime < before.timestamp()]
    if not dry_run:
        for folder in old:
            shutil.rmtree(folder, ignore_errors=True)
    days_gone = trace.prune(settings.traces_dir, min(days, settings.trace_days),
                            now.timestamp(), dry_run=dry_run)
    return {"attachments": len(old), "traces": len(days_gone)}


def file_bytes(path: Path | str) -> int:
    """The database's size on disk: the file and its write-ahead log."""
    if str(path) == ":memory:":
        return 0
    files = [Path(path), Path(f"{path}-wal")]
    return sum(file.stat().st_size for file in files if file.exists())


def schedule_prune(reminders: Reminders, zone: tzinfo, platform: str) -> Reminder:
    """The daily prune as a task of the timer at PRUNE_AT (one, whatever the setting: the
    task reads FRONTDESK_KEEP_DAYS when it fires)."""
    now = datetime.fromtimestamp(reminders.clock(), zone)
    first = now.replace(hour=PRUNE_AT.hour, minute=PRUNE_AT.minute, second=0, microsecond=0)
    return reminders.add("owner", platform, "", "the daily prune", first, zone=zone,
                         rrule="FREQ=DAILY", kind="prune", source=PRUNE_SOURCE)
