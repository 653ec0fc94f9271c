"""One backup file of a FRONTDESK_HOME: write it while the bot runs, read and check it back.

A backup is a ``.tar.gz`` holding ``frontdesk.db`` (copied with SQLite's online backup API,
so it is one consistent moment of the database even while the bot writes: a file copy of a
WAL database is not), the folders its rows point at (``attachments/``, ``traces/``), and
``manifest.json``: the Frontdesk version, the database's migrations with the version that
applied each, the time, the database's SHA-256 and what each folder holds. The archive is
written under a ``.partial`` name and renamed when complete, so a backup file is never half
of one; a write that fails (a full disk) removes the partial file. Python's ``tarfile``,
``sqlite3`` and ``json`` do all of it. Reading one back, every header is checked first
(``members.scan``: only the names a backup has, sizes under a cap, the database's checksum),
and only then is it extracted, with ``tarfile``'s ``data`` filter too.

Usage::

    path, manifest = make_backup(settings.home)               # backups/frontdesk-<time>.tar.gz
    manifest = unpack_backup(path, into=folder)               # checked, or BackupError
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.backups.members import FOLDERS, MANIFEST, ArchiveRefused, scan, size_cap
from sqlitedb import (
    DB_FILENAME,
    applied_migrations,
    database_path,
    open_file,
    open_read_only,
    running_version,
)

FORMAT = 1
BACKUPS_DIR = "backups"
SUFFIX = ".tar.gz"
DAILY_PREFIX = "frontdesk-daily-"


class BackupError(RuntimeError):
    """A backup cannot be made or is not sound; the message is one line for the user."""


@dataclass(frozen=True)
class Manifest:
    """What a backup holds, written as ``manifest.json`` inside it."""

    frontdesk: str  # the version that took it
    created_at: str  # ISO 8601, UTC
    kind: str  # manual | daily | before-upgrade
    database_sha256: str
    migrations: dict[str, str | None]  # name -> the version that applied it
    folders: dict[str, int] = field(default_factory=dict)  # folder -> files in it
    format: int = FORMAT
    database: str = DB_FILENAME

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        """The manifest read back; BackupError when a field is missing or of the wrong kind."""
        try:
            manifest = cls(frontdesk=str(data["frontdesk"]), created_at=str(data["created_at"]),
                           kind=str(data["kind"]), database_sha256=str(data["database_sha256"]),
                           migrations={str(k): None if v is None else str(v)
                                       for k, v in dict(data["migrations"]).items()},
                           folders={str(k): int(v) for k, v in dict(data["folders"]).items()},
                           format=int(data["format"]), database=str(data["database"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BackupError(f"its manifest is incomplete ({type(exc).__name__}: {exc})") \
                from exc
        if manifest.format > FORMAT:
            raise BackupError(f"it was written by Frontdesk {manifest.frontdesk} in a newer "
                              f"backup format ({manifest.format}); upgrade Frontdesk")
        # restore puts these names in the home: only the ones a backup is made of
        if manifest.database != DB_FILENAME:
            raise BackupError(f"its manifest names the database {manifest.database!r}; a "
                              f"backup's is {DB_FILENAME!r}")
        strange = sorted(set(manifest.folders) - set(FOLDERS))
        if strange:
            raise BackupError(f"its manifest names the folder {strange[0]!r}; a backup holds "
                              f"only {' and '.join(FOLDERS)}")
        return manifest


def backups_dir(home: Path) -> Path:
    """Where backups go by default: FRONTDESK_HOME/backups."""
    return home / BACKUPS_DIR


def default_path(home: Path, kind: str = "manual", now: float | None = None) -> Path:
    """A timestamped file name under ``backups/`` (a daily one is named by its day)."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    stamp = moment.strftime("%Y%m%d-%H%M%S")
    name = "frontdesk-" if kind == "manual" else f"frontdesk-{kind}-"
    return backups_dir(home) / f"{name}{stamp}{SUFFIX}"


def copy_database(source: Path, target: Path) -> None:
    """One consistent copy through SQLite's online backup API, as a single self-contained
    file (rollback journal mode, so no ``-wal`` beside it is needed)."""
    reader = open_read_only(source, timeout=30)
    writer = open_file(target)
    try:
        reader.backup(writer)  # all pages in one step: one read transaction, one moment
        writer.execute("PRAGMA journal_mode=DELETE")
    finally:
        writer.close()
        reader.close()


def check_database(path: Path) -> dict[str, str | None]:
    """SQLite's integrity check on a database file; its migrations. BackupError if damaged."""
    try:
        conn = open_read_only(path)
        try:
            verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
            migrations = applied_migrations(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupError(f"its database cannot be read ({exc})") from exc
    if verdict != "ok":
        raise BackupError(f"its database is damaged ({verdict})")
    return migrations


def make_backup(home: Path, target: Path | None = None, *, kind: str = "manual",
                folders: tuple[str, ...] = FOLDERS) -> tuple[Path, Manifest]:
    """Back up FRONTDESK_HOME's database and ``folders`` into one file; its path and manifest."""
    source = database_path(home)
    if not source.exists():
        raise BackupError(f"there is no database at {source} yet: nothing to back up")
    target = target or default_path(home, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="backup-", dir=target.parent) as staging:
        copy = Path(staging) / DB_FILENAME
        try:
            copy_database(source, copy)
        except (sqlite3.Error, OSError) as exc:  # "database or disk is full", for one
            raise BackupError(f"the database {source} cannot be copied ({exc})") from exc
        migrations = check_database(copy)
        try:
            manifest = _write_archive(partial, home, copy, migrations, kind, folders)
            os.replace(partial, target)
        except BaseException as exc:  # never a half-written backup kept as if complete
            partial.unlink(missing_ok=True)
            if isinstance(exc, OSError):  # "No space left on device", for one
                raise BackupError(f"the backup could not be written to {target.parent} "
                                  f"({exc.strerror or exc})") from exc
            raise
    return target, manifest


def _write_archive(partial: Path, home: Path, copy: Path, migrations: dict[str, str | None],
                   kind: str, folders: tuple[str, ...]) -> Manifest:
    """The archive at ``partial``: the database copy, the folders, the manifest; that."""
    counts: dict[str, int] = {}
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(copy, arcname=DB_FILENAME)
        for name in folders:
            if (home / name).is_dir():
                counts[name] = _add_folder(tar, home / name, name)
        manifest = Manifest(frontdesk=running_version(),
                            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                            kind=kind, database_sha256=_sha256(copy),
                            migrations=migrations, folders=counts)
        data = json.dumps(asdict(manifest), indent=2).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
    return manifest


def _add_folder(tar: tarfile.TarFile, folder: Path, arcname: str) -> int:
    """Every regular file under ``folder`` as it is now; one removed meanwhile is skipped."""
    count = 0
    tar.add(folder, arcname=arcname, recursive=False)
    for path in sorted(folder.rglob("*")):
        name = f"{arcname}/{path.relative_to(folder).as_posix()}"
        try:
            if path.is_dir() and not path.is_symlink():
                tar.add(path, arcname=name, recursive=False)
            elif path.is_file() and not path.is_symlink():
                tar.add(path, arcname=name, recursive=False)
                count += 1
        except FileNotFoundError:  # pruned (an old trace) while we walked
            continue
    return count


def unpack_backup(path: Path, into: Path) -> Manifest:
    """Check a backup and extract it into an empty folder: every header first (the names, the
    sizes, the manifest, the database's checksum; nothing written until they pass), then
    SQLite's integrity check and the database's migrations as the manifest lists them."""
    if not path.is_file():
        raise BackupError(f"{path} does not exist")
    there = next(folder for folder in (into, *into.parents) if folder.exists())
    cap = size_cap(path.stat().st_size, shutil.disk_usage(there).free)
    try:
        with tarfile.open(path, "r:*") as tar:
            found = scan(tar, cap)
            manifest = _manifest(path, found.manifest)
            if found.database_sha256 is None:
                raise BackupError(f"it holds no {DB_FILENAME}")
            if found.database_sha256 != manifest.database_sha256:
                raise BackupError("its database does not match the checksum in its manifest")
            unlisted = sorted(found.folders - set(manifest.folders))
            if unlisted:
                raise BackupError(f"it holds {unlisted[0]}/, which its manifest does not list")
            tar.extractall(into, members=found.members, filter="data")
    except ArchiveRefused as exc:
        raise BackupError(str(exc)) from exc
    except tarfile.ReadError as exc:
        raise BackupError(f"{path} cannot be read as a backup (it is not a .tar.gz archive, "
                          "or a damaged one)") from exc
    except (tarfile.TarError, EOFError, OSError) as exc:
        said = " ".join(str(exc).split())
        raise BackupError(f"{path} cannot be read as a backup ({said})") from exc
    database = into / DB_FILENAME
    if _sha256(database) != manifest.database_sha256:  # the file changed since it was read
        raise BackupError("its database does not match the checksum in its manifest")
    migrations = check_database(database)
    if set(migrations) != set(manifest.migrations):
        raise BackupError("its database's migrations differ from its manifest's")
    return manifest


def _manifest(path: Path, raw: bytes | None) -> Manifest:
    """The manifest's bytes read as one; BackupError when there are none or they do not parse."""
    if raw is None:
        raise BackupError(f"{path} is not a Frontdesk backup (no {MANIFEST})")
    try:
        return Manifest.from_json(json.loads(raw))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested past reason
        raise BackupError(f"its {MANIFEST} is not JSON ({type(exc).__name__})") from exc


def daily_backup(home: Path, day: str, keep: int) -> Path:
    """The backup of ``day`` (``YYYY-MM-DD``), taken once; then only the newest ``keep``
    daily backups are kept (manual and pre-upgrade ones are the owner's to remove)."""
    target = backups_dir(home) / f"{DAILY_PREFIX}{day}{SUFFIX}"
    if not target.exists():
        make_backup(home, target, kind="daily")
    for old in sorted(backups_dir(home).glob(f"{DAILY_PREFIX}*{SUFFIX}"))[:-max(keep, 1)]:
        old.unlink(missing_ok=True)
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

