"""The database's tables by owner: every part's ordered migrations, in one registry.

Each part owns its tables and applies its own list when it opens the database (the runs in
``graphs.runs.schema``, memory in ``memory.schema``, the gateway's ledger, the notices, the
people, the spend log, the reminders). This registry names them all once, so whoever asks
"which migrations does this version know?" (``frontdesk doctor``, a restore, an upgrade check)
reads one list instead of keeping its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.access import people
from bot.delivery import ledger, notifier
from bot.models import costs
from bot.reminders import store as reminders
from graphs.runs import schema as runs_schema
from memory import schema as memory_schema
from sqlitedb import Migration

MIGRATIONS_BY_OWNER: dict[str, Sequence[Migration]] = {
    "graphs.runs": runs_schema.MIGRATIONS,
    "memory": memory_schema.MIGRATIONS,
    "bot.delivery.ledger": ledger.MIGRATIONS,
    "bot.delivery.notifier": notifier.MIGRATIONS,
    "bot.access.people": people.MIGRATIONS,
    "bot.models.costs": costs.MIGRATIONS,
    "bot.reminders.store": reminders.MIGRATIONS,
}


def known_migrations() -> set[str]:
    """Every migration name this version of Frontdesk knows."""
    return {name for migrations in MIGRATIONS_BY_OWNER.values() for name, _ in migrations}
