"""Removing what is older than FRONTDESK_KEEP_DAYS, every table's owner asked in one place.

Each store removes its own old rows (a ``prune(before)`` method beside the code that writes
them, returning the rows removed per table): the runs that ended with their events, waits and
steps (``graphs.runs``), the inbox's answered messages (their payload; the key stays while
the platform could still deliver the message again), sent outbox parts and their files,
run buttons whose wait is decided, run filings, leftover live messages, per-call cost rows
(folded into each day's totals first), past reminders and meetings (and their events' links
and moves), the owner's urgent notices once sent, and guests' drafts once decided (with their
buttons). Never removed: a run still running or waiting and what points at it, a reminder or
meeting still ahead, a notice still held, a draft still open, memory notes and chat history,
the people. Attachments left on disk and JSONL trace folders go too.

``prune`` does it in batches: each transaction removes what ended before a cut-off that lets
about ``BATCH_RUNS`` runs go (and with them what was written in the same span of time: their
events and steps, the inbox and outbox rows, the costs), and the running bot's writes take
their turn between two batches, so a large first prune never holds them up for long. Then it
gives the freed pages back to the file system, a few thousand at a time
(``sqlitedb.vacuum.reclaim``). With ``dry_run`` one transaction counts and is rolled back, and
no file is touched, so the counts are what a real prune would remove now. The timer runs it
daily (``schedule_prune``: a task like the daily backup), and more often when
FRONTDESK_KEEP_DAYS is short (``prune_often``: every quarter of it, when that is under a day);
``frontdesk prune`` runs it now.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import time as TimeOfDay
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.delivery.drafts import Drafts
from bot.delivery.files import OutboxFiles
from bot.delivery.inbox import Inbox
from bot.delivery.notifier import NoticeLog
from bot.delivery.parts import OutboxParts
from bot.delivery.run_chats import RunChats
from bot.delivery.shown import LiveMessages
from bot.meetings.extras import MeetingExtras
from bot.meetings.store import MeetingStore
from bot.models.costs import SpendLog
from bot.reminders.store import Reminder, Reminders
from graphs import trace
from graphs.runs import RunStore
from sqlitedb.database import Database
from sqlitedb.memory import give_back
from sqlitedb.vacuum import reclaim

log = logging.getLogger(__name__)

PRUNE_SOURCE = "setting:FRONTDESK_KEEP_DAYS"  # the daily task's source: one, ever
PRUNE_AT = TimeOfDay(3, 50)  # local: after the daily backup (03:30), so it holds the day
ATTACHMENTS = "attachments"  # under FRONTDESK_HOME (``bot.media.attachments``)
DAY_S = 86_400.0
# Runs per transaction: a chat run is about 25 rows in all (16 events, its steps, the inbox and
# outbox rows, its chat index), so a batch is some 5,000 rows, a few tens of milliseconds.
BATCH_RUNS = 200
PAUSE_S = 0.005  # between batches: the bot's writes, waiting on the writer, get their turn
TIE_S = 2e-6  # past runs that ended at the same moment (a datetime keeps microseconds)


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
          dry_run: bool = False, now: datetime | None = None,
          batch: int = BATCH_RUNS, stop: threading.Event | None = None) -> Pruned:
    """Remove what is older than ``days`` (FRONTDESK_KEEP_DAYS by default), ``batch`` ended
    runs' worth per transaction; what went. ``stop`` set: no further batch (the bot stops)."""
    keep = settings.keep_days if days is None else days
    moment = now or datetime.now(UTC)
    result = Pruned(keep, moment - timedelta(days=keep), dry_run)
    result.bytes_before = file_bytes(db.path)
    if dry_run:
        try:
            with db.transaction():
                result.removed = remove_rows(db, settings, result.before, moment)
                result.removed |= remove_orphans(db)
                raise DryRun
        except DryRun:
            pass
    else:
        for cut in cuts(db, result.before.timestamp(), batch):
            if stop is not None and stop.is_set():
                return result  # the rest at the next prune
            with db.transaction():
                counts = remove_rows(db, settings, datetime.fromtimestamp(cut, UTC), moment)
            for table, removed in counts.items():
                result.removed[table] = result.removed.get(table, 0) + removed
            time.sleep(PAUSE_S)  # the writer's lock is not fair: let a waiting write in
        with db.transaction():
            result.removed |= remove_orphans(db)
    result.removed |= remove_files(settings, keep, moment, dry_run=dry_run)
    if not dry_run:
        reclaim(db.writer)
        give_back()  # the page cache this thread filled and the vacuum emptied, to the system
    result.bytes_after = file_bytes(db.path)
    return result


async def prune_in_thread(db: Database, settings: Settings) -> Pruned:
    """``prune`` in a worker thread. Cancelled (the bot stops), it ends after the batch under
    way and only then gives the cancel back: the database is closed next, and closing it
    under a statement another thread is running crashes the process."""
    stop = threading.Event()
    work = asyncio.ensure_future(asyncio.to_thread(prune, db, settings, stop=stop))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([work])
        raise


def cuts(db: Database, before: float, batch: int) -> Iterator[float]:
    """The cut-offs of the batches, the last one ``before``: each lets ``batch`` more of the
    ended runs go than the one before it (counted from the last cut-off, along
    ``runs_by_end``), and moves on past runs that ended at one and the same moment."""
    runs = RunStore(db)
    cut = float("-inf")
    while cut < before:
        ended = runs.ended_after(cut, before, batch)
        cut = before if ended is None else min(before, max(ended, cut + TIE_S))
        yield cut


def prune_interval(keep_days: float) -> float:
    """Seconds between two prunes of the running bot: a day, or a quarter of
    FRONTDESK_KEEP_DAYS when that is shorter (so nothing outlives the setting by more than
    a quarter of it; twelve hours kept means pruned every three hours), at least a second."""
    return max(1.0, min(DAY_S, keep_days * DAY_S / 4))


async def prune_often(keep_days: float, prune_now: Callable[[], Awaitable[Pruned]],
                      sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """The running bot's prunes between the daily ones, for a FRONTDESK_KEEP_DAYS under four
    days (at four or more, the daily task alone is often enough: this returns at once)."""
    interval = prune_interval(keep_days)
    if interval >= DAY_S:
        return
    while True:
        await sleep(interval)
        try:
            pruned = await prune_now()
            log.info("prune: %d rows and files older than %s removed", pruned.total,
                     pruned.before.isoformat(timespec="seconds"))
        except Exception:  # the next round tries again
            log.exception("pruning failed")


def remove_rows(db: Database, settings: Settings, before: datetime,
                now: datetime) -> dict[str, int]:
    """Every store's rows older than ``before``, in one transaction (the caller's): the runs
    first, then what pointed at them, kept where it points at a run still open."""
    runs = RunStore(db)
    open_runs = runs.open_run_ids()
    parts = OutboxParts(db)
    unsent = parts.unsent_replies()
    zone = ZoneInfo(settings.timezone) if settings.timezone else None
    drafts = Drafts(db)
    removed: dict[str, int] = {}
    for counts in (runs.prune(before),
                   Inbox(db).prune(before, now),
                   parts.prune(before),
                   OutboxFiles(db).prune(before, unsent),
                   Buttons(db).prune(before, open_runs, drafts.open_ids()),
                   RunChats(db).prune(before, open_runs),
                   LiveMessages(db).prune(before),
                   SpendLog(db, tz=zone, clock=now.timestamp).prune(before),
                   Reminders(db).prune(before),
                   MeetingStore(db).prune(before),
                   NoticeLog(db).prune(before, now),
                   drafts.prune(before)):
        removed |= counts
    return removed


def remove_orphans(db: Database) -> dict[str, int]:
    """What no kept row points at any more, once after the batches (it has no time of its
    own): the event links and moves of meetings pruned."""
    return MeetingExtras(db).prune(*MeetingStore(db).kept())


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
