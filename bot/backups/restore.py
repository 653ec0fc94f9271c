"""Put a backup back into a FRONTDESK_HOME: only with no bot running, only a sound backup of a
schema this version knows, and never losing what it replaces.

The steps, each refusing with one line: the home's lock (no bot running, none starting while
this runs), the backup unpacked and checked (``archive.unpack_backup``), its migrations known
to this version. Then the current database is settled (its WAL written into the file) and
moved aside as ``frontdesk.db.replaced-<time>``, each folder the backup holds likewise
(``attachments.replaced-<time>``), and the backup's put in their place by rename.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.backups.archive import BackupError, Manifest, unpack_backup
from bot.backups.lock import HomeInUse, exclusive_home
from bot.schema import known_migrations
from sqlitedb import database_path, open_file, running_version


@dataclass(frozen=True)
class Restored:
    """What a restore did."""

    manifest: Manifest
    replaced: Path | None  # where the database it replaced is kept (None: there was none)
    pending: int  # migrations this version applies at the next start


def restore_backup(home: Path, backup: Path, now: float | None = None) -> Restored:
    """Replace the home's database (and the backup's folders) with the backup's.

    BackupError (one line) when a bot is running, the backup is not sound, or it is newer.
    """
    stamp = datetime.fromtimestamp(time.time() if now is None else now).strftime(
        "%Y%m%d-%H%M%S")
    try:
        with exclusive_home(home):
            staging = Path(tempfile.mkdtemp(prefix=".restore-", dir=home))
            try:
                manifest = unpack_backup(backup, staging)
                unknown = sorted(set(manifest.migrations) - known_migrations())
                if unknown:
                    newer = manifest.migrations[unknown[0]] or manifest.frontdesk
                    raise BackupError(
                        f"it was taken from a database of Frontdesk {newer} with "
                        f"migrations this Frontdesk {running_version()} does not know "
                        f"({unknown[0]}); upgrade Frontdesk first")
                replaced = _put_in_place(home, staging, manifest, stamp)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    except HomeInUse as exc:
        raise BackupError(f"{exc}; stop it first (Ctrl-C, or `systemctl --user stop "
                          "frontdesk`), then restore") from exc
    pending = len(known_migrations() - set(manifest.migrations))
    return Restored(manifest, replaced, pending)


def _put_in_place(home: Path, staging: Path, manifest: Manifest, stamp: str) -> Path | None:
    """Move the current database and folders aside, the backup's in."""
    database = database_path(home)
    replaced = None
    if database.exists():
        _settle(database)
        replaced = database.with_name(f"{database.name}.replaced-{stamp}")
        os.replace(database, replaced)
        for suffix in ("-wal", "-shm"):  # a WAL left by a crash belongs to the old file
            leftover = database.with_name(database.name + suffix)
            if leftover.exists():
                os.replace(leftover, replaced.with_name(replaced.name + suffix))
    os.replace(staging / manifest.database, database)
    for name in manifest.folders:
        if not (staging / name).is_dir():
            continue
        if (home / name).exists():
            os.replace(home / name, home / f"{name}.replaced-{stamp}")
        os.replace(staging / name, home / name)
    return replaced


def _settle(database: Path) -> None:
    """Write the WAL into the database file, so the file kept aside is whole by itself."""
    try:
        conn = open_file(database)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # a damaged file is kept aside as it is, its -wal beside it
