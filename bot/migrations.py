"""The one database's migrations, in the one order they are applied, and the one way to open it.

Each part keeps its tables' migrations beside the code that reads them (``graphs/`` and
``memory/`` cannot import the bot, so they export their own lists), and this module lists them
all once, in order, the way simonw/llm keeps one ``migrations.py``. ``open_database`` opens
``frontdesk.db`` (a ``sqlitedb.database.Database``: one writer, one reader) and applies the
list, once; no store applies migrations of its own. The doctor, the backups and the
newer-version refusal read the same list (``bot.schema``).
"""

from __future__ import annotations

from pathlib import Path

from bot.access import people
from bot.delivery import files, ledger, notifier, shown
from bot.meetings import store as meetings
from bot.models import choices, costs
from bot.reminders import store as reminders
from graphs.runs import schema as runs_schema
from memory import schema as memory_schema
from sqlitedb import Migration
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
]


def open_database(path: Path | str) -> Database:
    """The process's database at ``path``, with every migration of this version applied."""
    return Database(path, migrations=MIGRATIONS, atomic=True)
