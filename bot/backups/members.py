"""What a backup file may hold, read from its headers before anything is written.

A backup made by ``archive.make_backup`` holds ``manifest.json``, ``frontdesk.db`` and the files
of the folders Frontdesk backs up (``attachments/``, ``traces/``), each as a relative name, each
a plain file or folder, each once. ``scan`` reads every member's header and refuses the archive,
naming the first reason in one line, when a member is anything else (a name outside those, a
link, a device, a name twice) or when the sizes declared would pass the cap. A tar header
declares its member's size, and extraction writes exactly that many bytes, so the cap holds
for what is written. The manifest is read and the database hashed as they stream past, so a
lying checksum is caught with nothing written either.

The cap (``size_cap``): what the backup unpacks to may be 50 times the file's size, or 512 MiB
whatever the file's size, and must leave 256 MiB free on the home's disk. Honest backups stay
well inside: a new database compresses about 40 times, photos and voice notes hardly at all; a
decompression bomb compresses a thousand times.
"""

from __future__ import annotations

import hashlib
import tarfile
from dataclasses import dataclass, field

from sqlitedb import DB_FILENAME

MANIFEST = "manifest.json"
FOLDERS = ("attachments", "traces")  # under FRONTDESK_HOME: the files the rows point at
MIB = 1 << 20
SIZE_RATIO = 50  # unpacked bytes per byte of the backup file...
SIZE_FLOOR = 512 * MIB  # ...or this much, whichever is more
DISK_RESERVE = 256 * MIB  # left free on the home's disk once the backup is unpacked
MANIFEST_MAX = 1 * MIB  # a real manifest is a few hundred bytes
MAX_MEMBERS = 250_000  # headers held while checking; a month of traces is far fewer


class ArchiveRefused(ValueError):
    """The archive holds something a backup never does; the message is one line."""


@dataclass
class Scanned:
    """What ``scan`` found: the members to extract, the manifest's bytes, the database's hash
    and the folders (top-level names) the members belong to."""

    members: list[tarfile.TarInfo] = field(default_factory=list)
    manifest: bytes | None = None
    database_sha256: str | None = None
    folders: set[str] = field(default_factory=set)
    total: int = 0  # bytes declared


@dataclass(frozen=True)
class Cap:
    """How many bytes a backup may unpack to, and what sets that (said when it is passed)."""

    size: int
    reason: str


def size_cap(archive_bytes: int, free_bytes: int) -> Cap:
    """The cap for a backup file of ``archive_bytes``, with ``free_bytes`` free on the disk it
    unpacks to."""
    by_size = max(SIZE_FLOOR, SIZE_RATIO * archive_bytes)
    room = max(free_bytes - DISK_RESERVE, 0)
    if room < by_size:
        return Cap(room, f"more than the disk has room for ({_mib(free_bytes)} free, "
                         f"{_mib(DISK_RESERVE)} of it kept free)")
    return Cap(by_size, f"more than a backup of {_mib(archive_bytes)} holds (at most "
                        f"{SIZE_RATIO} times its size, or {_mib(SIZE_FLOOR)})")


def scan(tar: tarfile.TarFile, cap: Cap) -> Scanned:
    """Every member's header checked, in archive order, before any is extracted;
    ArchiveRefused naming the first that is not what a backup holds."""
    found = Scanned()
    names: set[str] = set()
    while (member := tar.next()) is not None:
        if len(found.members) >= MAX_MEMBERS:
            raise ArchiveRefused(f"it holds more than {MAX_MEMBERS:,} files, more than a "
                                 "backup would")
        name = member.name
        if name in names:
            raise ArchiveRefused(f"it holds {name!r} twice")
        names.add(name)
        _check_name(member)
        found.total += member.size
        if found.total > cap.size:
            raise ArchiveRefused(f"it would unpack to more than {_mib(cap.size)} (at "
                                 f"{name!r}, {_mib(member.size)}): {cap.reason}")
        if name == MANIFEST:
            if member.size > MANIFEST_MAX:
                raise ArchiveRefused(f"its {MANIFEST} is {_mib(member.size)}, not a manifest")
            found.manifest = _read(tar, member)
        elif name == DB_FILENAME:
            found.database_sha256 = _hash(tar, member)
        else:
            found.folders.add(name.split("/", 1)[0])
        found.members.append(member)
    return found


def _check_name(member: tarfile.TarInfo) -> None:
    """A relative name Frontdesk writes, for a plain file (or a folder inside a folder)."""
    name = member.name
    parts = name.split("/")
    if name in (MANIFEST, DB_FILENAME):
        if not member.isreg() or member.issparse():
            raise ArchiveRefused(f"its {name!r} is not a plain file")
        return
    if parts[0] not in FOLDERS or any(part in ("", ".", "..") for part in parts):
        raise ArchiveRefused(f"it holds {name!r}, a name no backup has (only {MANIFEST}, "
                             f"{DB_FILENAME} and {'/, '.join(FOLDERS)}/)")
    if member.isdir() or (member.isreg() and not member.issparse()):
        return
    kind = "a link" if member.issym() or member.islnk() else "not a plain file"
    raise ArchiveRefused(f"its {name!r} is {kind}")


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    stream = tar.extractfile(member)
    assert stream is not None  # a regular file: _check_name saw to it
    return stream.read()


def _hash(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    stream = tar.extractfile(member)
    assert stream is not None  # a regular file: _check_name saw to it
    digest = hashlib.sha256()
    for block in iter(lambda: stream.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def _mib(size: int) -> str:
    return f"{size / MIB:,.1f} MiB"
