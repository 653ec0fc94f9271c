"""The database before any command: stop on a newer one, back up and migrate an older one.

``prepare_database`` runs once per command, before the command opens the database. It reads
the file without writing (``bot.schema.read_state``): a migration this version does not know
means a newer Frontdesk wrote it, and the command stops with one line naming both versions. A
database with migrations to apply is first backed up (the database alone; migrations touch
nothing else) and then migrated in one transaction, so a migration that fails leaves the
database exactly as it was, and the command stops naming that migration.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.backups.archive import BackupError, make_backup
from bot.schema import ordered_migrations, read_state
from sqlitedb import MigrationError, database_path
from sqlitedb.database import Database


class UpgradeStop(RuntimeError):
    """The command must not run on this database; the message is one line for the user."""


def prepare_database(home: Path, say: Callable[[str], object]) -> list[str]:
    """Make the home's database fit for this version; the migrations applied now.

    ``say`` gets the one line telling where the pre-upgrade backup went.
    """
    path = database_path(home)
    state = read_state(path)
    if state.problem:  # not a database at all: the command meets it and reports it
        return []
    if state.unknown:
        raise UpgradeStop(state.newer_line())
    if not state.pending:
        return []
    backup = None
    if state.exists:
        try:
            backup, _ = make_backup(home, kind="before-upgrade", folders=())
        except (BackupError, OSError) as exc:
            raise UpgradeStop(f"the database could not be backed up before its upgrade "
                              f"({exc}); nothing was changed") from exc
        say(f"backed up the database before applying {len(state.pending)} migrations: "
            f"{backup}")
    db = Database(path)  # closed again before the command opens it (``open_database``)
    try:
        return db.migrate(ordered_migrations(), atomic=True)
    except MigrationError as exc:
        kept = f" (its backup: {backup})" if backup else ""
        raise UpgradeStop(f"the upgrade failed at migration {exc.name} "
                          f"({type(exc.cause).__name__}: {exc.cause}); the database is as it "
                          f"was{kept}") from exc
    finally:
        db.close()
