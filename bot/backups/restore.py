"""Put a backup back into a FRONTDESK_HOME: only with no bot running, only a sound backup of a
schema this version knows, and never losing what it replaces.

The steps, each refusing with one line and leaving every file of the home as it was: no bot
running (the home's lock); the backup checked and unpacked into a staging folder inside the
home (``archive.unpack_backup``: only the names a backup has, sizes under a cap, the checksum,
SQLite's integrity check); its migrations known to this version; its tables, indexes, triggers
and views exactly those its migrations make (``bot.schema.foreign_objects``). Only then, holding
the lock, is the current database settled (its WAL written into the file) and moved aside as
``frontdesk.db.replaced-<time>``, each folder the backup holds likewise
(``attachments.replaced-<time>``), and the backup's put in their place by rename; a rename that
fails puts back the ones done before it.
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
from bot.backups.lock import HomeInUse, exclusive_home, home_in_use, lock_path
from bot.schema import foreign_objects, known_migrations
from sqlitedb import DB_FILENAME, database_path, open_file, open_read_only, running_version

STOP_FIRST = "stop it first (Ctrl-C, or `systemctl --user stop frontdesk`), then restore"


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
    home.mkdir(parents=True, exist_ok=True)
    # Asked before the long checks, without making a lock file the home did not have (a
    # home no bot ever ran on has none); the lock itself is taken to put the backup in place.
    if lock_path(home).exists() and home_in_use(home):
        raise BackupError(f"a bot is running on {home}; {STOP_FIRST}")
    staging = Path(tempfile.mkdtemp(prefix=".restore-", dir=home))
    try:
        manifest = unpack_backup(backup, staging)
        _check_schema(staging / DB_FILENAME, manifest)
        try:
            with exclusive_home(home):
                replaced = _put_in_place(home, staging, manifest, stamp)
        except HomeInUse as exc:
            raise BackupError(f"{exc}; {STOP_FIRST}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    pending = len(known_migrations() - set(manifest.migrations))
    return Restored(manifest, replaced, pending)


def _check_schema(database: Path, manifest: Manifest) -> None:
    """Every migration known here; every schema object one of them makes, and none else."""
    unknown = sorted(set(manifest.migrations) - known_migrations())
    if unknown:
        newer = manifest.migrations[unknown[0]] or manifest.frontdesk
        raise BackupError(
            f"it was taken from a database of Frontdesk {newer} with migrations this "
            f"Frontdesk {running_version()} does not know ({unknown[0]}); upgrade Frontdesk "
            "first")
    try:
        conn = open_read_only(database, immutable=True)
        try:
            foreign = foreign_objects(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupError(f"its database cannot be read ({exc})") from exc
    if foreign:
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise BackupError(f"its database is not as its migrations make it: {foreign[0]}{more}")


def _put_in_place(home: Path, staging: Path, manifest: Manifest, stamp: str) -> Path | None:
    """Move the current database and folders aside, the backup's in; all of it, or none."""
    database = database_path(home)
    moves: list[tuple[Path, Path]] = []
    replaced = None
    try:
        if database.exists():
            _settle(database)
            replaced = database.with_name(f"{database.name}.replaced-{stamp}")
            _move(database, replaced, moves)
            for suffix in ("-wal", "-shm"):  # a WAL left by a crash belongs to the old file
                leftover = database.with_name(database.name + suffix)
                if leftover.exists():
                    _move(leftover, replaced.with_name(replaced.name + suffix), moves)
        _move(staging / DB_FILENAME, database, moves)
        for name in manifest.folders:  # only known folder names (``Manifest.from_json``)
            if not (staging / name).is_dir():
                continue
            if (home / name).exists():
                _move(home / name, home / f"{name}.replaced-{stamp}", moves)
            _move(staging / name, home / name, moves)
    except OSError as exc:
        for source, target in reversed(moves):
            os.replace(target, source)
        raise BackupError(f"the backup could not be put in place ({exc}); the home is as it "
                          "was") from exc
    return replaced


def _move(source: Path, target: Path, moves: list[tuple[Path, Path]]) -> None:
    os.replace(source, target)
    moves.append((source, target))


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
