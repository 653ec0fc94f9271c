"""`frontdesk backup` and `frontdesk restore` as a user runs them: a round trip on a real home,
and each refusal as one line that leaves the home as it was."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from bot.backups.archive import MANIFEST, BackupError, make_backup, unpack_backup
from bot.backups.lock import home_in_use
from bot.backups.restore import restore_backup
from bot.schema import known_migrations
from sqlitedb import running_version
from tests.backups.conftest import (
    NEWER,
    ROOT,
    clean_env,
    database_at,
    digest,
    frontdesk,
    make_newer,
    notes,
    snapshot,
    written_path,
)


def test_a_backup_holds_the_database_the_folders_and_a_manifest(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert frontdesk(home, "memory", "add", "the spare key is under the mat").returncode == 0
    (home / "attachments" / "telegram" / "42").mkdir(parents=True)
    (home / "attachments" / "telegram" / "42" / "photo.jpg").write_bytes(b"\xff\xd8 a photo")
    (home / "traces").mkdir(exist_ok=True)
    (home / "traces" / "run-1.jsonl").write_text('{"event": "start"}\n')
    done = frontdesk(home, "backup")
    path = written_path(done)
    assert path.parent == home / "backups" and path.name.endswith(".tar.gz")
    assert "attachments/ (1 files)" in done.stdout and "traces/ (1 files)" in done.stdout
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
        manifest = json.loads(tar.extractfile(MANIFEST).read())  # type: ignore[union-attr]
    assert {"frontdesk.db", MANIFEST, "attachments/telegram/42/photo.jpg",
            "traces/run-1.jsonl"} <= names
    assert manifest["frontdesk"] == running_version() and manifest["kind"] == "manual"
    assert set(manifest["migrations"]) == known_migrations()
    assert all(version == running_version() for version in manifest["migrations"].values())
    assert manifest["folders"] == {"attachments": 1, "traces": 1} and manifest["created_at"]
    unpacked = unpack_backup(path, tmp_path / "out")  # checksum and integrity check pass
    assert notes(tmp_path / "out" / "frontdesk.db") == ["the spare key is under the mat"]
    assert unpacked.migrations == manifest["migrations"]


def test_a_path_given_is_where_it_goes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    database_at(home)
    assert written_path(frontdesk(home, "backup", str(tmp_path / "mine.tar.gz"))) \
        == tmp_path / "mine.tar.gz"
    (tmp_path / "shelf").mkdir()
    assert written_path(frontdesk(home, "backup", str(tmp_path / "shelf"))).parent \
        == tmp_path / "shelf"


def test_restore_brings_back_the_backup_and_keeps_what_it_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert frontdesk(home, "memory", "add", "before the backup").returncode == 0
    (home / "attachments").mkdir()
    (home / "attachments" / "a.txt").write_text("kept in the backup")
    path = written_path(frontdesk(home, "backup"))
    assert frontdesk(home, "memory", "add", "after the backup").returncode == 0
    (home / "attachments" / "b.txt").write_text("came later")

    done = frontdesk(home, "restore", str(path))
    assert done.returncode == 0, done.stderr
    assert "Restored" in done.stdout and "kept at" in done.stdout
    assert notes(home / "frontdesk.db") == ["before the backup"]
    [kept] = home.glob("frontdesk.db.replaced-*")
    assert str(kept) in done.stdout
    assert notes(kept) == ["before the backup", "after the backup"]
    assert sorted(p.name for p in (home / "attachments").iterdir()) == ["a.txt"]
    [old_folder] = home.glob("attachments.replaced-*")
    assert (old_folder / "b.txt").exists()
    search = frontdesk(home, "memory", "search", "after")
    assert search.returncode == 0 and "after the backup" not in search.stdout


@pytest.fixture
def running_bot(tmp_path: Path) -> Iterator[Path]:
    """A process holding the home's lock as `frontdesk run` does (claim_home)."""
    home = tmp_path / "home"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path\n"
         "from bot.backups.lock import claim_home\n"
         "held = claim_home(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()",
         str(home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env=clean_env(home), cwd=ROOT)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    yield home
    holder.communicate("", timeout=10)  # stdin closed: it ends, the kernel drops the lock


def test_restore_is_refused_while_a_bot_runs_on_the_home(running_bot: Path) -> None:
    home = running_bot
    database_at(home)
    path = written_path(frontdesk(home, "backup"))
    before = digest(home / "frontdesk.db")
    assert home_in_use(home)
    done = frontdesk(home, "restore", str(path))
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("frontdesk: not restored: a bot is running on") and "stop it" in line
    assert digest(home / "frontdesk.db") == before and not list(home.glob("*.replaced-*"))


def test_the_lock_goes_with_the_bot(running_bot: Path) -> None:
    assert home_in_use(running_bot)


def test_the_lock_is_free_with_no_bot(tmp_path: Path) -> None:
    assert not home_in_use(tmp_path / "home")


def forged(tmp_path: Path, good: Path, change: str) -> Path:
    """A copy of a good backup with one thing wrong."""
    work = tmp_path / f"forge-{change}"
    with tarfile.open(good) as tar:
        tar.extractall(work, filter="data")
    manifest = json.loads((work / MANIFEST).read_text())
    if change == "no manifest":
        (work / MANIFEST).unlink()
    elif change == "tampered":
        conn = sqlite3.connect(work / "frontdesk.db")
        conn.execute("DELETE FROM migrations WHERE name = (SELECT MIN(name) FROM migrations)")
        conn.commit()
        conn.close()
    elif change == "newer":
        make_newer(work / "frontdesk.db")
        manifest["migrations"]["zz_from_the_future_001"] = NEWER
        manifest["database_sha256"] = digest(work / "frontdesk.db")
        (work / MANIFEST).write_text(json.dumps(manifest))
    out = tmp_path / f"{change.replace(' ', '-')}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for item in sorted(work.iterdir()):
            tar.add(item, arcname=item.name)
    return out


@pytest.mark.parametrize(("change", "said"), [
    ("not a file", "does not exist"),
    ("not an archive", "cannot be read as a backup"),
    ("no manifest", "is not a Frontdesk backup (no manifest.json)"),
    ("tampered", "does not match the checksum"),
    ("newer", f"Frontdesk {NEWER} with migrations this Frontdesk"),
])
def test_an_unsound_backup_is_refused_in_one_line(tmp_path: Path, change: str,
                                                  said: str) -> None:
    home = tmp_path / "home"
    database_at(home)
    good = written_path(frontdesk(home, "backup"))
    before = digest(home / "frontdesk.db")
    if change == "not a file":
        bad = tmp_path / "missing.tar.gz"
    elif change == "not an archive":
        bad = tmp_path / "notes.txt"
        bad.write_text("just some text")
    else:
        bad = forged(tmp_path, good, change)
    done = frontdesk(home, "restore", str(bad))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("frontdesk: not restored: ") and said in line, line
    assert digest(home / "frontdesk.db") == before and not list(home.glob("*.replaced-*"))


def test_no_backup_without_a_database(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match=r"there is no database at .* yet"):
        make_backup(tmp_path / "home")
    assert not (tmp_path / "home" / "backups").exists()


def test_a_fresh_home_is_made_then_backed_up(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = frontdesk(home, "backup")  # the check before a command makes the database
    assert unpack_backup(written_path(done), tmp_path / "out").migrations.keys() \
        == known_migrations()


def test_a_rename_that_fails_puts_back_the_ones_before_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert frontdesk(home, "memory", "add", "before the backup").returncode == 0
    (home / "attachments").mkdir()
    (home / "attachments" / "a.txt").write_text("kept in the backup")
    path = written_path(frontdesk(home, "backup"))
    assert frontdesk(home, "memory", "add", "after the backup").returncode == 0
    # where the attachments would be kept aside is taken (a folder with a file in it): the
    # rename fails after the database was already swapped
    moment = 1_800_000_000.0
    stamp = datetime.fromtimestamp(moment).strftime("%Y%m%d-%H%M%S")
    (home / f"attachments.replaced-{stamp}").mkdir()
    (home / f"attachments.replaced-{stamp}" / "x").write_text("in the way")
    (home / "run.lock").touch()  # as a bot that ran here left it; the restore takes it
    before = {name: value for name, value in snapshot(home).items()
              if not name.startswith("frontdesk.db")}  # the database: settled, then put back
    with pytest.raises(BackupError, match=r"could not be put in place .*; the home is as it was"):
        restore_backup(home, path, now=moment)
    assert notes(home / "frontdesk.db") == ["before the backup", "after the backup"]
    assert {name: value for name, value in snapshot(home).items()
            if not name.startswith("frontdesk.db")} == before
    assert not list(home.glob("frontdesk.db.replaced-*"))
