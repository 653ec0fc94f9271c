"""The one database's schema: every migration in one ordered list, how the file is opened,
and where a file stands against this version.

Each part keeps its tables' migrations beside the code that reads them (``graphs/`` and
``memory/`` cannot import the bot, so they export their own lists), and ``MIGRATIONS`` lists
them all once, in the order they are applied, the way simonw/llm keeps one ``migrations.py``.
``open_database`` opens ``frontdesk.db`` (a ``sqlitedb.database.Database``: one writer, one
reader) and applies that list, once; no store applies migrations of its own. ``frontdesk
doctor``, the backups, the upgrade before each command and ``--version`` read the same list:
``read_state`` tells, without writing a byte, where a database file stands against it: up to
date, migrations to apply, or written by a newer Frontdesk (a migration this version does not
know). ``foreign_objects`` tells whether its tables, indexes, triggers and views are exactly
those its migrations make: a trigger slipped into a restored backup would run its SQL at the
next write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.access import people
from bot.delivery import drafts, files, ledger, notifier, shown
from bot.meetings import extras as meeting_extras
from bot.meetings import store as meetings
from bot.models import choices, costs
from bot.reminders import store as reminders
from graphs.runs import schema as runs_schema
from memory import schema as memory_schema
from sqlitedb import Migration, applied_migrations, open_read_only, running_version, vacuum
from sqlitedb.database import Database

# Applied in this order on a new database; an existing one gets the ones it has not recorded.
# The names never change: they are what a database file remembers.
MIGRATIONS: list[Migration] = [
    *runs_schema.MIGRATIONS,  # runs, their events, waits and steps
    *memory_schema.MIGRATIONS,  # notes, chat history, their FTS5 and impact indexes
    *ledger.MIGRATIONS,  # inbox, outbox parts, buttons, cursors, the run-chat index
    *notifier.MIGRATIONS,  # notices to the owner and their hourly summaries
    *shown.MIGRATIONS,  # live replies' partial messages
    *files.MIGRATIONS,  # replies' files
    *people.MIGRATIONS,  # who may talk to the bot
    *costs.MIGRATIONS,  # the spend log
    *choices.MIGRATIONS,  # each chat's /model choice
    *reminders.MIGRATIONS,  # reminders and their repeats
    *meetings.MIGRATIONS,  # meeting requests and bookings
    *vacuum.MIGRATIONS,  # the file set up to give freed pages back (bot.retention)
    *meeting_extras.MIGRATIONS,  # a booked event's sequence and link; reschedules
    *drafts.MIGRATIONS,  # replies held for the owner's approval
]


def open_database(path: Path | str) -> Database:
    """The process's database at ``path``, with every migration of this version applied."""
    return Database(path, migrations=MIGRATIONS, atomic=True)


def known_migrations() -> set[str]:
    """Every migration name this version of Frontdesk knows."""
    return {name for name, _ in ordered_migrations()}


def ordered_migrations() -> list[Migration]:
    """Every migration, in the order an upgrade applies them (``MIGRATIONS`` read when asked,
    so a test may put a list of its own there)."""
    return list(MIGRATIONS)


@dataclass(frozen=True)
class SchemaState:
    """Where a database file stands against this version of Frontdesk."""

    path: Path
    exists: bool
    applied: dict[str, str | None] = field(default_factory=dict)  # name -> version that did it
    pending: list[str] = field(default_factory=list)  # known here, not applied yet, in order
    unknown: list[str] = field(default_factory=list)  # applied by a newer Frontdesk
    problem: str = ""  # the file cannot be read

    @property
    def newer_version(self) -> str:
        """Which Frontdesk applied the migrations this one does not know."""
        versions = sorted({v for name in self.unknown if (v := self.applied.get(name))})
        return " / ".join(versions) if versions else "a newer version"

    def newer_line(self) -> str:
        """The one line every command stops with on a newer database."""
        return (f"{self.path} was written by Frontdesk {self.newer_version} (migration "
                f"{self.unknown[0]}), newer than this Frontdesk {running_version()}: upgrade "
                "Frontdesk, or restore a backup taken by this version (`frontdesk restore`)")

    def summary(self) -> str:
        """For ``frontdesk --version``: 'no database yet', 'N migrations, up to date', ..."""
        if not self.exists:
            return "no database yet"
        if self.problem:
            return f"cannot be read ({self.problem})"
        if self.unknown:
            return f"written by Frontdesk {self.newer_version}, newer than this one"
        count = f"{len(self.applied)} migrations"
        return f"{count}, {len(self.pending)} to apply" if self.pending else f"{count}, up to date"


def read_state(path: Path) -> SchemaState:
    """The file's migrations against this version's, read-only (no byte of it is written)."""
    if not path.exists():
        return SchemaState(path, exists=False, pending=[n for n, _ in ordered_migrations()])
    # With no -wal beside it, the file alone is the whole database (a clean close folds the WAL
    # in): read it as immutable, which creates no -wal or -shm. With one, a bot has it open
    # (or crashed): read-only through the WAL, which already exists.
    wal = path.with_name(path.name + "-wal").exists()
    try:
        conn = open_read_only(path, immutable=not wal)
        try:
            applied = applied_migrations(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return SchemaState(path, exists=True, problem=str(exc))
    known = known_migrations()
    return SchemaState(path, exists=True, applied=applied,
                       pending=[n for n, _ in ordered_migrations() if n not in applied],
                       unknown=sorted(set(applied) - known))


SchemaObject = tuple[str, str, str, str]  # type, name, its table, its SQL (whitespace folded)

# Tables SQLite itself makes when someone runs ANALYZE: its query planner's statistics, which
# run nothing. A database may hold them whatever its migrations.
PLANNER_STATISTICS: set[SchemaObject] = {
    ("table", "sqlite_stat1", "sqlite_stat1", "CREATE TABLE sqlite_stat1(tbl,idx,stat)"),
    ("table", "sqlite_stat4", "sqlite_stat4",
     "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)"),
}
# The migrations table as Frontdesk made it before it recorded versions; the next command's
# upgrade adds the column (``sqlitedb``), after which it reads as the one made now.
UNVERSIONED_MIGRATIONS_TABLE: SchemaObject = (
    "table", "migrations", "migrations",
    "CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")


def schema_objects(conn: sqlite3.Connection) -> set[SchemaObject]:
    """Every table, index, trigger and view the database holds (SQLite's own and FTS5's
    shadow tables too), as ``sqlite_master`` lists them."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
    return {(kind, name, table, " ".join((sql or "").split())) for kind, name, table, sql in rows}


def expected_objects(applied: Iterable[str]) -> set[SchemaObject]:
    """What this version's migrations named in ``applied`` make, applied in their order to a
    new database in memory."""
    wanted = set(applied)
    steps = [step for step in ordered_migrations() if step[0] in wanted]
    with Database(":memory:", migrations=steps, atomic=True) as scratch:
        return schema_objects(scratch.reader)


def foreign_objects(conn: sqlite3.Connection) -> list[str]:
    """Each way the database's schema differs from what its applied migrations make ('an
    extra trigger evil on memory_notes', 'table memory_notes differs from its migration', 'no
    index ...'); empty when they are exactly the same. The migrations must all be known here
    (``read_state`` tells which are not)."""
    found = schema_objects(conn)
    has_table = any(kind == "table" and name == "migrations" for kind, name, _, _ in found)
    expected = expected_objects(applied_migrations(conn)) if has_table else set()
    if UNVERSIONED_MIGRATIONS_TABLE in found:
        found.discard(UNVERSIONED_MIGRATIONS_TABLE)
        found |= {row for row in expected if row[:2] == ("table", "migrations")}
    extra = found - expected - PLANNER_STATISTICS
    missing = expected - found
    named = {(kind, name) for kind, name, _, _ in expected}
    said = [f"{kind} {_shown(name)} differs from its migration" if (kind, name) in named
            else f"an extra {kind} {_shown(name)} on {_shown(table)}" if table != name
            else f"an extra {kind} {_shown(name)}" for kind, name, table, _ in sorted(extra)]
    found_named = {(kind, name) for kind, name, _, _ in found}
    said += [f"no {kind} {name}" for kind, name, _, _ in sorted(missing)
             if (kind, name) not in found_named]
    return said


def _shown(name: str) -> str:
    """A name as it may be printed: quoted and escaped unless a plain identifier (another
    party chose it: no terminal escapes, no line breaks)."""
    return name if name.isidentifier() else repr(name)
