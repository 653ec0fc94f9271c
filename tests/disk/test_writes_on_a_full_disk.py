"""Each writer of FRONTDESK_HOME on a real full disk (a small tmpfs, filled): the log file keeps
quiet and counts what it missed, a trace and a backup leave no half file, the error says so.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.backups.archive import BackupError, make_backup
from bot.config.disk import disk_full
from bot.config.logs import setup_logging
from bot.config.settings import Settings
from bot.schema import open_database
from graphs.trace import write_jsonl
from tests.disk.small_disk import fill, small_disk

LINES = 50


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk", "1m") as mounted:
        yield mounted


def test_the_log_file_drops_lines_quietly_and_says_how_many_once_there_is_room(
        disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(disk)})
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    try:
        setup_logging(settings, "INFO")
        log = logging.getLogger("frontdesk.test")
        log.info("written before the disk filled")
        filler = fill(disk)
        for number in range(LINES):
            log.info("line %d on a full disk %s", number, "x" * 200)
        err = capsys.readouterr().err
        assert "Logging error" not in err and "Traceback" not in err
        assert err.count("on a full disk") == LINES  # the terminal still has every line
        filler.unlink()
        log.info("written after the room came back")
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:] = before[0]
        root.setLevel(before[1])
    text = (disk / "logs" / "frontdesk.log").read_text(encoding="utf-8")
    assert "written before the disk filled" in text and "written after the room" in text
    missed = [line for line in text.splitlines() if "were not written here" in line]
    assert len(missed) == 1
    count = int(missed[0].split("WARNING bot.config.logs: ")[1].split()[0])  # dropped or cut
    whole = [line for line in text.splitlines() if line.endswith("on a full disk " + "x" * 200)]
    assert 0 < count <= LINES and len(whole) == LINES - count
    assert all(line.startswith("20") for line in text.splitlines())  # none joined to a cut one


def test_a_trace_that_does_not_fit_leaves_no_file_and_the_old_one_whole(disk: Path) -> None:
    path = disk / "traces" / "run-1.jsonl"
    write_jsonl([{"event": "graph_start", "t": 1}], path)
    filler = fill(disk)
    events = [{"event": "node_end", "t": n, "delta": "y" * 2000} for n in range(200)]
    with pytest.raises(OSError) as full:
        write_jsonl(events, path)
    assert full.value.errno == errno.ENOSPC and disk_full(full.value)
    assert sorted(p.name for p in path.parent.iterdir()) == ["run-1.jsonl"]
    assert path.read_text(encoding="utf-8") == '{"event": "graph_start", "t": 1}\n'
    filler.unlink()


def test_a_backup_that_does_not_fit_is_removed_not_kept_half_written(
        tmp_path: Path, disk: Path) -> None:
    home = tmp_path / "home"
    open_database(home / "frontdesk.db").close()
    (home / "attachments").mkdir()
    (home / "attachments" / "scan.bin").write_bytes(os.urandom(3 << 20))  # no gzip shrinks it
    target = disk / "backups" / "frontdesk-full.tar.gz"
    with pytest.raises(BackupError) as refused:
        make_backup(home, target)
    assert "No space left on device" in str(refused.value) and disk_full(refused.value)
    assert list(target.parent.iterdir()) == []  # no .partial, no staging folder
    assert os.statvfs(disk).f_bfree == os.statvfs(disk).f_blocks  # every block given back


def test_the_database_says_full_in_the_shape_disk_full_knows(disk: Path) -> None:
    db = open_database(disk / "frontdesk.db")
    try:
        filler = fill(disk)
        with pytest.raises(sqlite3.OperationalError) as full:
            for number in range(100):
                db.writer.execute("INSERT INTO cursors (name, value) VALUES (?, ?)",
                                  (f"n{number}", "z" * 4000))
        assert disk_full(full.value)
        filler.unlink()
        db.writer.execute("INSERT INTO cursors (name, value) VALUES ('after', 'room')")
        assert db.writer.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
